"""A small window of a tensor's values, read without reading the tensor: the value grid.

A tensor is seen as 2-D planes: its last two dimensions are the rows and columns, the leading
ones pick the plane (a 1-D tensor is one column, a scalar one cell). :func:`value_slice` reads
only the elements of the window asked for: through the mmap for plain tensors (strided pickles
too), the bytes of the rows concerned for packed F4/F6, and for a quantized weight the codes
of the smallest block of rows its scheme dequantizes (the dequantized values, as the stats).

Floats are widened exactly to float64 (BF16, F8, F6, F4 and F16 all fit), integers to int64
(uint64 kept), bool to bool, complex to complex128.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .checkpoint import read_byte_chunks, unpack
from .errors import CheckpointError
from .layout import StridedTensorInfo
from .quant import gptq_awq
from .quant import rows as qrows
from .quant.kernels import to_f32
from .stats import as_float64
from .wording import _q

if TYPE_CHECKING:
    from .checkpoint import Checkpoint
    from .layout import TensorInfo
    from .quant.layout import QuantizedWeight

# a quantized weight is dequantized a block of rows at a time: refuse a block over this many
# values rather than hold it (gpt-oss MXFP4 dequantizes a whole expert at once)
MAX_DEQUANT_VALUES = 1 << 24


@dataclass(frozen=True)
class Plane:
    """How a tensor of ``shape`` is seen as planes of ``rows × cols`` values."""

    shape: tuple[int, ...]

    @property
    def lead(self) -> tuple[int, ...]:
        """The sizes of the dimensions that pick a plane (none for 0-, 1- and 2-D)."""
        return self.shape[:-2] if len(self.shape) > 2 else ()

    @property
    def rows(self) -> int:
        return self.shape[-2] if len(self.shape) >= 2 else (self.shape[0] if self.shape else 1)

    @property
    def cols(self) -> int:
        return self.shape[-1] if len(self.shape) >= 2 else 1

    def check(self, index: tuple[int, ...]) -> None:
        if len(index) != len(self.lead) or any(
            not 0 <= i < n for i, n in zip(index, self.lead, strict=True)
        ):
            raise IndexError(f"plane {list(index)} outside {list(self.lead)}")


@dataclass(frozen=True)
class ValueSlice:
    """``values[r, c]`` is the tensor's element ``(*index, row0 + r, col0 + c)``."""

    name: str
    index: tuple[int, ...]  # the leading indices of the plane
    row0: int
    col0: int
    values: np.ndarray  # 2-D: float64, int64/uint64, bool or complex128
    plane: Plane
    dequantized: bool = False


def widen(x: np.ndarray) -> np.ndarray:
    """Values as float64 (exact for every float dtype read), int64, uint64, bool or complex128."""
    kind = x.dtype.kind
    if kind == "b":
        return x.astype(bool)
    if kind == "u":
        return x.astype(np.uint64)
    if kind == "i":
        return x.astype(np.int64)
    if kind == "c":
        return x.astype(np.complex128)
    return as_float64(x)


def value_slice(
    ckpt: Checkpoint,
    t: TensorInfo,
    index: tuple[int, ...] = (),
    row0: int = 0,
    col0: int = 0,
    rows: int = 64,
    cols: int = 64,
    weight: QuantizedWeight | None = None,
) -> ValueSlice:
    """At most ``rows × cols`` values of plane ``index`` from ``(row0, col0)`` (clamped to the
    plane). With ``weight`` (whose codes ``t`` holds) the values are the dequantized ones."""
    shape = tuple(weight.shape) if weight is not None else tuple(t.shape)
    plane = Plane(shape)
    plane.check(tuple(index))
    row0 = max(0, min(row0, plane.rows - 1))
    col0 = max(0, min(col0, plane.cols - 1))
    r1, c1 = min(plane.rows, row0 + max(0, rows)), min(plane.cols, col0 + max(0, cols))
    name = weight.name if weight is not None else t.name
    if math.prod(shape) == 0:
        return ValueSlice(name, tuple(index), 0, 0, np.zeros((0, 0)), plane, weight is not None)
    if weight is not None:
        values = _dequantized(ckpt, weight, plane, tuple(index), row0, r1, col0, c1)
    elif t.dtype.is_packed and not isinstance(t, StridedTensorInfo):
        values = _packed(ckpt, t, plane, tuple(index), row0, r1, col0, c1)
    else:
        view = ckpt.view(t)  # mapped (strided for a pickle's views): only the pages indexed
        if len(shape) >= 2:  # below are read
            block = view[tuple(index)][row0:r1, col0:c1]
        elif len(shape) == 1:
            block = view[row0:r1].reshape(-1, 1)
        else:
            block = view.reshape(1, 1)
        values = widen(np.array(block))
    return ValueSlice(name, tuple(index), row0, col0, values, plane, weight is not None)


def _flat(plane: Plane, index: tuple[int, ...], r: int, c: int) -> int:
    """The C-order position of element ``(*index, r, c)``."""
    lead = 0
    for i, n in zip(index, plane.lead, strict=True):
        lead = lead * n + i
    return (lead * plane.rows + r) * plane.cols + c


def _packed(
    ckpt: Checkpoint, t: TensorInfo, plane: Plane, index: tuple[int, ...],
    r0: int, r1: int, c0: int, c1: int,
) -> np.ndarray:  # fmt: skip
    """F4/F6: the bytes of each row's window only, unpacked (a whole unit of 2 or 4 values)."""
    per = 4 if t.dtype.bits == 6 else 2  # values per unit
    unit = 3 if t.dtype.bits == 6 else 1  # bytes per unit
    start, _end = ckpt.byte_range(t)
    out = np.empty((r1 - r0, c1 - c0), dtype=t.dtype.numpy)
    try:
        fh = open(t.file, "rb", buffering=0)  # noqa: SIM115 - closed below
    except OSError as e:
        raise CheckpointError(t.file, f"cannot read: {e.strerror or e}") from None
    with fh:
        for r in range(r0, r1):
            e0 = _flat(plane, index, r, c0)
            e1 = e0 + (c1 - c0)
            u0, u1 = e0 // per, -(-e1 // per)
            raw = next(read_byte_chunks(fh, t.file, start + u0 * unit, start + u1 * unit, 1 << 30))
            out[r - r0] = unpack(raw, t.dtype)[e0 - u0 * per : e1 - u0 * per]
    return widen(out)


def _dequantized(
    ckpt: Checkpoint, w: QuantizedWeight, plane: Plane, index: tuple[int, ...],
    r0: int, r1: int, c0: int, c1: int,
) -> np.ndarray:  # fmt: skip
    """The window's values dequantized: the scheme's rows (the logical tensor flattened to
    ``plan.rows × plan.cols``) that hold it, in the smallest block the scheme dequantizes."""
    plan = qrows.prepare(ckpt, w)
    first = _flat(plane, index, r0, c0)
    last = _flat(plane, index, r1 - 1, c1 - 1)
    unit = qrows.rows_per_chunk(plan, 1)  # whole heads, words or block rows
    a0 = first // plan.cols // unit * unit
    a1 = min(plan.rows, (last // plan.cols // unit + 1) * unit)
    if (a1 - a0) * plan.cols > MAX_DEQUANT_VALUES:
        raise CheckpointError(
            w.codes.file,
            f"{_q(w.name)} ({w.scheme.label}) dequantizes {(a1 - a0) * plan.cols:,} values at "
            "a time: too many to show a window of",
        )
    raw = _raw_rows(ckpt, plan, a0, a1)
    flat = to_f32(qrows.dequantize_rows(plan, raw, a0, a1), plan.compute).reshape(-1)
    base = a0 * plan.cols
    out = np.empty((r1 - r0, c1 - c0), dtype=np.float32)
    for r in range(r0, r1):
        e0 = _flat(plane, index, r, c0) - base
        out[r - r0] = flat[e0 : e0 + (c1 - c0)]
    return widen(out)


def _raw_rows(ckpt: Checkpoint, plan: qrows.DequantPlan, a0: int, a1: int) -> np.ndarray:
    """The stored bytes of the scheme's rows ``a0:a1`` (as ``rows.raw_chunks`` reads them)."""
    t = plan.weight.codes
    if plan.packing is not None:  # output rows are columns of the stored codes
        return gptq_awq.columns(ckpt.view(t), plan.packing, a0, a1)
    # burn QFloat: the scales follow the values in the same tensor
    row_bytes = plan.burn.row_bytes if plan.burn is not None else t.nbytes // max(1, plan.rows)
    start, _end = ckpt.byte_range(t)
    lo, hi = start + a0 * row_bytes, start + a1 * row_bytes
    if hi <= lo:
        return np.empty(0, np.uint8)
    try:
        fh = open(t.file, "rb", buffering=0)  # noqa: SIM115 - closed below
    except OSError as e:
        raise CheckpointError(t.file, f"cannot read: {e.strerror or e}") from None
    with fh:
        return next(read_byte_chunks(fh, t.file, lo, hi, max(1, hi - lo)))


__all__ = ["MAX_DEQUANT_VALUES", "Plane", "ValueSlice", "value_slice", "widen"]
