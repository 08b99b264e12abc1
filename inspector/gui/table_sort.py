"""Sort keys of the tensor table, one list per column, computed once: one Python sort of 200k
keys instead of millions of ``lessThan`` calls. Names sort naturally (layer 2 before layer 10);
the status column is the name order regrouped by status, so a change of target sorts nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from inspector.core.header import TensorInfo
from inspector.core.natural_order import status_rank
from inspector.core.status import TensorStatus

from .table_text import cast_error_value
from .tensor_columns import Col


def name_order(natural_keys: list[str], descending: bool) -> np.ndarray:
    """Row indices in natural name order, ties in file order either way: the name column's
    order, and the order inside each status group of the status column."""
    order = sorted(range(len(natural_keys)), key=natural_keys.__getitem__, reverse=descending)
    return np.array(order, dtype=np.intp)


def regroup_by_status(
    by_name: np.ndarray, statuses: Sequence[TensorStatus], descending: bool
) -> list[int]:
    """``by_name`` regrouped by status (differing first, or last when descending), keeping the
    name order inside each group. One stable sort of small integers: 200k rows in ~15 ms,
    where sorting "rank + name" strings took ~55 ms on every change of target."""
    rank_of = {s: status_rank(s) for s in set(statuses)}  # a few statuses
    ranks = np.fromiter(map(rank_of.__getitem__, statuses), np.int8, len(statuses))[by_name]
    if descending:
        np.negative(ranks, out=ranks)
    return by_name[np.argsort(ranks, kind="stable")].tolist()


def sort_keys(
    col: int,
    tensors: Sequence[TensorInfo],
    cast: Mapping[str, Any],
    diff: Mapping[str, Any],
) -> list:
    """The sort key of each tensor for column ``col`` (not the name and status columns: see
    :func:`name_order` and :func:`regroup_by_status`)."""
    inf = float("inf")
    if col == Col.DTYPE:
        return [(t.dtype.kind != "float", t.dtype.bits, t.dtype.name) for t in tensors]
    if col == Col.SHAPE:
        return [(len(t.shape), t.shape) for t in tensors]
    if col == Col.PARAMS:
        return [t.numel for t in tensors]
    if col == Col.SIZE:
        return [t.nbytes for t in tensors]
    if col == Col.CAST_ERR:
        values = [cast_error_value(cast.get(t.name)) for t in tensors]
        return [(v is None, -inf if v is None else v) for v in values]
    if col == Col.REF_DIFF:
        keys = []
        for t in tensors:
            r = diff.get(t.name)
            v = r.max_abs_diff if r is not None and r.max_abs_diff is not None else None
            keys.append((v is None, -inf if v is None else v))
        return keys
    return list(range(len(tensors)))
