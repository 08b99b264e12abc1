"""Sort keys of the tensor table, one list per column, computed once: one Python sort of 200k
keys instead of millions of ``lessThan`` calls. Names sort naturally (layer 2 before layer 10);
the status column is the name order regrouped by status, so a change of target sorts nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspector.core.layout import TensorInfo

from .table_text import cast_error_value
from .tensor_columns import Col


def sort_keys(
    col: int,
    tensors: Sequence[TensorInfo],
    cast: Mapping[str, Any],
    diff: Mapping[str, Any],
) -> list:
    """The sort key of each tensor for column ``col`` (not the name and status columns: see
    :func:`inspector.core.natural_order.name_order` and ``regroup_by_status``)."""
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
