"""Tensors stored as strided views (a pickle's transposed or sliced tensors): mapped without a copy,
streamed in bounded contiguous chunks in C order — the order a contiguous copy would have."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from .layout import StridedTensorInfo


def strided_view(buffer: object, t: StridedTensorInfo) -> np.ndarray:
    """A read-only array over ``buffer`` (the mapped file) with the tensor's shape and strides."""
    item = t.dtype.numpy.itemsize
    base = np.frombuffer(buffer, dtype=t.dtype.numpy, count=t.span_elems, offset=t.start)
    view = np.lib.stride_tricks.as_strided(
        base, shape=t.shape, strides=tuple(s * item for s in t.strides), writeable=False
    )
    return view


def strided_chunks(view: np.ndarray, chunk_elems: int) -> Iterator[np.ndarray]:
    """The view's elements in C order, as new contiguous flat arrays of at most ``chunk_elems``
    (one more row block of the leading axes at a time)."""
    if view.size == 0:
        return
    if view.ndim == 0:
        yield np.ascontiguousarray(view).reshape(-1)
        return
    row = math.prod(view.shape[1:])
    if row <= chunk_elems:
        rows = max(1, chunk_elems // max(row, 1))
        for i in range(0, view.shape[0], rows):
            yield np.ascontiguousarray(view[i : i + rows]).reshape(-1)
        return
    for i in range(view.shape[0]):
        yield from strided_chunks(view[i], chunk_elems)
