"""Sort keys of the tensor table, one list per column, computed once: one Python sort of 200k
keys instead of millions of ``lessThan`` calls. Names sort naturally (layer 2 before layer 10)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inspector.core.header import TensorInfo
from inspector.core.natural_order import status_rank
from inspector.core.status import TensorStatus

from .table_text import cast_error_value
from .tensor_columns import Col

_RANK_CHAR = "012"


def sort_keys(
    col: int,
    tensors: Sequence[TensorInfo],
    statuses: Sequence[TensorStatus],
    cast: Mapping[str, Any],
    diff: Mapping[str, Any],
    names: Callable[[], list[str]],
) -> list:
    """The sort key of each tensor for column ``col``. ``names`` gives the natural keys of the
    names, kept by the caller: the name and status columns and every change of target share
    one list."""
    inf = float("inf")
    if col == Col.NAME:
        return names()
    if col == Col.DTYPE:
        return [(t.dtype.kind != "float", t.dtype.bits, t.dtype.name) for t in tensors]
    if col == Col.SHAPE:
        return [(len(t.shape), t.shape) for t in tensors]
    if col == Col.PARAMS:
        return [t.numel for t in tensors]
    if col == Col.SIZE:
        return [t.nbytes for t in tensors]
    if col == Col.STATUS:  # differing first, each group in natural name order: the default view
        # one string per row (the rank as its first character): compared in C, unlike tuples
        prefix = {s: _RANK_CHAR[status_rank(s)] for s in set(statuses)}  # a few statuses
        return [prefix[s] + k for s, k in zip(statuses, names(), strict=True)]
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
