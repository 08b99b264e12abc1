"""One weight quantized a block of rows at a time: the tensors it becomes, and their rows.

The large part (codes, or packed words) is written as its rows come; the scales are a few
bytes per group, kept until the weight ends and written after it. Memory is one block of
rows plus one weight's scales, whatever the file's size.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Executor, Future
from dataclasses import dataclass

import numpy as np

from ..checkpoint import Checkpoint
from ..dtypes import DTYPES
from ..layout import TensorEntry, TensorInfo
from ..quant.kernels import to_f32
from .rtn import QuantizedRows, global_scale, quantize_rows
from .schemes import Kind, Scheme, Strategy
from .targets import QuantizePlan

BIG = {Kind.FP8: "weight", Kind.INT: "weight_packed", Kind.FP4: "weight_packed"}


def parts_of(t: TensorInfo, scheme: Scheme) -> list[TensorEntry]:
    """The tensors ``t`` becomes, in the order they are written (the large one first)."""
    rows, cols = (int(d) for d in t.shape)
    base = t.name[: -len("weight")]
    sd = t.dtype
    if scheme.kind is Kind.FP8:
        if scheme.strategy is Strategy.CHANNEL:
            scale_shape: tuple[int, ...] = (rows, 1)
        else:
            bh, bw = scheme.block or (128, 128)
            scale_shape = (-(-rows // bh), -(-cols // bw))
        return [
            TensorEntry(base + "weight", DTYPES["F8_E4M3"], (rows, cols)),
            TensorEntry(base + "weight_scale", sd, scale_shape),
        ]
    gs = scheme.group_width(cols)
    if scheme.kind is Kind.INT:
        return [
            TensorEntry(
                base + "weight_packed", DTYPES["I32"], (rows, -(-cols * scheme.bits // 32))
            ),
            TensorEntry(base + "weight_scale", sd, (rows, cols // gs)),
            TensorEntry(base + "weight_shape", DTYPES["I64"], (2,)),
        ]
    packed = TensorEntry(base + "weight_packed", DTYPES["U8"], (rows, cols // 2))
    if scheme.strategy is Strategy.TENSOR_GROUP:
        return [
            packed,
            TensorEntry(base + "weight_scale", DTYPES["F8_E4M3"], (rows, cols // gs)),
            TensorEntry(base + "weight_global_scale", DTYPES["F32"], (1,)),
        ]
    return [packed, TensorEntry(base + "weight_scale", DTYPES["U8"], (rows, cols // gs))]


def rows_per_block(t: TensorInfo, chunk_bytes: int, unit: int = 1) -> int:
    """Rows per block: about ``chunk_bytes`` of the source, a multiple of ``unit`` (128 for
    FP8_BLOCK, whose scales cover 128 rows)."""
    row_bytes = max(1, t.dtype.nbytes(int(t.shape[1])))
    return max(unit, chunk_bytes // row_bytes // unit * unit)


def row_blocks(
    ckpt: Checkpoint, t: TensorInfo, rows_per: int
) -> Iterator[tuple[np.ndarray, int, int]]:
    """The weight's rows ``r0:r1`` as a (rows, cols) array, block by block (read, not mapped:
    resident memory stays one block)."""
    cols = int(t.shape[1])
    r0 = 0
    for flat in ckpt.iter_chunks(t, rows_per * t.dtype.nbytes(cols)):
        rows = flat.size // cols
        yield flat.reshape(rows, cols), r0, r0 + rows
        r0 += rows


@dataclass
class WeightAbsmax:
    """Each NVFP4 weight's largest |value|, for the global scale its fused group shares."""

    of: dict[str, float]

    def scale_of(self, plan: QuantizePlan, t: TensorInfo) -> np.float32 | None:
        """``t``'s global scale: its fused group's (None for a scheme without one)."""
        members = plan.fused.get(t.name)
        if not members:
            return None
        values = [self.of[m] for m in members]
        return global_scale(math.nan if any(map(math.isnan, values)) else max(values), t.dtype)


def weight_absmax(ckpt: Checkpoint, t: TensorInfo, chunk_bytes: int) -> float:
    """max |value| of ``t`` (NaN if it holds one: torch's max propagates it), found on the bit
    patterns without the sign (their integer order is the order of |value|, a NaN's above
    inf's), so a 16-bit weight is never widened for it."""
    uint = {2: np.uint16, 4: np.uint32}[t.dtype.bits // 8]
    no_sign = uint((1 << (t.dtype.bits - 1)) - 1)
    top = uint(0)
    for flat in ckpt.iter_chunks(t, chunk_bytes):
        if flat.size:
            top = max(top, np.bitwise_and(flat.view(uint), no_sign).max())
    return float(to_f32(np.array([top], dtype=uint).view(t.dtype.numpy), t.dtype)[0])


def quantized_blocks(
    ckpt: Checkpoint,
    t: TensorInfo,
    scheme: Scheme,
    chunk_bytes: int,
    pool: Executor,
    gscale: np.float32 | None = None,
    measure: bool = True,
    ahead: int = 2,
) -> Iterator[tuple[QuantizedRows, int]]:
    """(quantized rows, r1) per block of ``t``, in order; ``pool`` quantizes the next ``ahead``
    blocks while the caller writes this one (numpy lets go of the GIL: every core works)."""
    unit = scheme.rows_unit
    pending: deque[tuple[Future[QuantizedRows], int]] = deque()
    for rows, _r0, r1 in row_blocks(ckpt, t, rows_per_block(t, chunk_bytes, unit)):
        # a copy: the reader reuses its buffer for the next block
        job = pool.submit(quantize_rows, rows.copy(), t.dtype, scheme, gscale, measure)
        pending.append((job, r1))
        if len(pending) > ahead:
            done, end = pending.popleft()
            yield done.result(), end
    while pending:
        done, end = pending.popleft()
        yield done.result(), end
