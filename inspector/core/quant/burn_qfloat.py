"""burn's quantized tensors (``QFloat`` in a ``.bpk``) as logical weights, dequantized as burn
does (commit 2c06be351).

Each tensor is one weight of its own: values, then block scales, then a two-level scheme's
per-tensor scale, in one byte run (``formats/burnpack/qfloat``). The reference is burn's CPU
backend: ``burn-ndarray/src/ops/qtensor.rs`` (``q_from_data``, ``dequantize``) over
``QuantizedBytes::into_vec_i8`` (``burn-std/src/tensor/quantization.rs``): each value is
``scale × code`` in f32, the scale of the block ``BlockLayout::block_of`` names, multiplied
first by the per-tensor scale in a two-level scheme (a scale of 0 is read as 0.1 there:
``SymmetricQuantization::init``'s ``valid_scale``). Packed 4- and 2-bit values are unpacked
as ``unpack_q_to_i8s`` does (LSB first, sign-extended); the CPU backend refuses to load them,
and cubecl's kernel (``cubecl-std/src/quant/dequantize.rs``) computes the same product except
for a zero scale (0, not 0.1): a block whose scale is 0 is read only if its codes are all 0
(what burn's quantizer writes), where every backend gives +0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..formats.burnpack.qfloat import BurnQuant, QMode, QStore, QValue, ScaleDtype
from ..formats.burnpack.tensor import BurnQuantInfo
from ..layout import TensorInfo
from .layout import QuantizedWeight, QuantLayout
from .schemes import QuantScheme

_ZERO_SCALE = np.float32(0.1)  # burn-ndarray's valid_scale: E::from(0.1)
_Q8 = (QValue.Q8F, QValue.Q8S)
_SUB_BYTE = (QValue.Q4F, QValue.Q4S, QValue.Q2F, QValue.Q2S)


def burn_layout(tensors: Iterable[TensorInfo]) -> QuantLayout | None:
    """The QFloat tensors of a Burnpack file; None when it has none."""
    quantized = [t for t in tensors if isinstance(t, BurnQuantInfo)]
    if not quantized:
        return None
    counts: dict[str, int] = {}
    for t in quantized:
        counts[t.scheme.value.value] = counts.get(t.scheme.value.value, 0) + 1
    layout = QuantLayout(
        "burn QFloat " + ", ".join(f"{k}×{v}" for k, v in sorted(counts.items())), confirmed=True
    )
    for t in quantized:
        why = unverified(t.scheme, t.logical)
        if why is not None and layout.unsupported is None:
            layout.unsupported = (
                f"tensor {t.name!r} is {t.scheme.describe()}: {why}; a cast would have to guess "
                "its values, so it is refused"
            )
        numel = math.prod(t.logical)
        layout.add(
            QuantizedWeight(t.name, QuantScheme.BURN, t, t.logical, block_type=t.scheme.value.value,
                            bits_per_weight=t.nbytes * 8 / numel if numel else 0.0,
                            detail=t.scheme.describe(), block_dims=t.scheme.block)
        )  # fmt: skip
    return layout


def unverified(q: BurnQuant, shape: tuple[int, ...]) -> str | None:
    """Why burn's dequantization of this scheme is not reproduced here, or None."""
    if q.mode is not QMode.SYMMETRIC:
        return "lookup-table values (the table is not in the tensor) are not read"
    if q.value not in _Q8 + _SUB_BYTE:
        return f"burn's CPU backend does not dequantize {q.value.value} values"
    if ScaleDtype.UE8M0 in (q.scale_dtype, q.global_dtype):
        return "burn does not decode UE8M0 scales"
    if q.global_dtype not in (None, ScaleDtype.F32):
        return "burn stores a two-level scheme's per-tensor scale as F32 only"
    if q.store is QStore.PACKED_NATIVE or (q.store is QStore.PACKED_U32 and q.packed_dim != 0):
        return "burn unpacks values packed along the innermost dimension into u32 only"
    if q.value in _SUB_BYTE and q.store is not QStore.PACKED_U32:
        return f"burn stores {q.value.value} values packed in u32 only"
    cols = shape[-1] if shape else 1
    if q.store is QStore.PACKED_U32 and cols % q.num_quants:
        return (
            f"its last dimension ({cols:,}) is not a multiple of {q.num_quants} values a word: "
            "burn pads each row, then unpacks without the padding"
        )
    return _legacy_unverified(q, shape) if q.legacy else None


def _legacy_unverified(q: BurnQuant, shape: tuple[int, ...]) -> str | None:
    """burn 0.21 (``QuantizedBytes``, ``QuantizationStrategy`` of that release) agrees with the
    layout read here only where no padding, no other scale width and no flat block differs."""
    if q.scale_dtype is not ScaleDtype.F32:
        return "burn 0.21 wrote F32 scales whatever param said"
    if q.values_len(shape) != -(-math.prod(shape) // q.num_quants) * (q.stored_bits // 8):
        return "burn 0.21 sized its values padded to 4 bytes but wrote the scales right after them"
    dims = q.block_dims(len(shape)) if q.block is not None and shape else [1]
    if any(d != 1 for d in dims[:-1]) or (shape[-1] if shape else 1) % dims[-1]:
        return "burn 0.21's blocks are flat runs of the values, not this block"
    return None


@dataclass(frozen=True)
class BurnRows:
    """What a block of rows needs: where the values end, one row's bytes, the scale grid."""

    values_len: int
    row_bytes: int
    grid: np.ndarray  # F32, the scale grid's shape: each block's effective scale
    block: tuple[int, ...]  # per dimension, leading ones filled (all 1s: per tensor)
    scales: np.ndarray  # F32, flat: the effective scales before burn reads a 0 as 0.1

    @property
    def zero_scales(self) -> bool:
        """A scale of 0: burn's CPU backend reads it as 0.1, cubecl's kernel as 0 — the same
        values only while every code of its block is 0 and the 0 is +0."""
        return bool(np.any(self.scales == 0))


def prepare(scheme: BurnQuant, shape: tuple[int, ...], tail: np.ndarray) -> BurnRows:
    """The effective scale of every block from the tensor's scale bytes (``tail``: every byte
    after the values). ValueError: why burn's result cannot be reproduced."""
    why = unverified(scheme, shape)
    if why is not None:
        raise ValueError(why)
    grid_shape = scheme.num_blocks(shape)
    n = math.prod(grid_shape)
    size = scheme.scale_dtype.size
    scales = _decode(tail[: n * size], scheme.scale_dtype)
    if scheme.global_dtype is not None:  # a two-level scheme: global × block, in f32
        (g,) = _decode(tail[n * size :], ScaleDtype.F32)
        with np.errstate(all="ignore"):
            scales = np.float32(g) * scales
    effective = np.where(scales == 0, _ZERO_SCALE, scales).astype(np.float32)
    rank = len(shape)
    if scheme.block is not None:
        block = tuple(scheme.block_dims(rank))
    else:  # one block: the whole tensor
        block = tuple(max(1, d) for d in shape)
    cols = shape[-1] if shape else 1
    return BurnRows(
        scheme.values_len(shape),
        cols * scheme.bits // 8,
        effective.reshape(grid_shape if scheme.block is not None and rank else (1,) * max(1, rank)),
        block if rank else (1,),
        scales.astype(np.float32),
    )


def check_zero_blocks(
    scheme: BurnQuant, shape: tuple[int, ...], rows: BurnRows, raw: np.ndarray, r0: int, r1: int
) -> None:
    """ValueError when a block whose scale is 0 holds a code that is not 0, or its 0 is -0:
    burn's backends give other values for it (0.1 × code and +0 on the CPU, 0 or -0 on GPUs)."""
    cols = shape[-1] if shape else 1
    if cols == 0 or r1 == r0:
        return
    codes = codes_of(scheme, raw, r1 - r0, cols)
    stored = _row_scales(rows.scales.reshape(rows.grid.shape), rows.block, shape, r0, r1)
    if np.any((stored == 0) & ((codes != 0) | np.signbit(stored))):
        raise ValueError(
            "a block whose scale is 0 holds codes that are not 0 (or its 0 is -0), which "
            "burn's CPU backend reads as 0.1 × code and its GPU kernels as 0"
        )


def _decode(raw: np.ndarray, dtype: ScaleDtype) -> np.ndarray:
    """Stored scales as f32, exactly as burn's ``decode_scales`` widens them."""
    raw = np.ascontiguousarray(raw, dtype=np.uint8)
    if dtype is ScaleDtype.F32:
        return raw.view("<f4").astype(np.float32)
    if dtype is ScaleDtype.F16:
        return raw.view("<f2").astype(np.float32)
    if dtype is ScaleDtype.BF16:
        return (raw.view("<u2").astype(np.uint32) << 16).view(np.float32)
    assert dtype is ScaleDtype.UE4M3
    import ml_dtypes

    out = raw.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    # the float8 crate's E4M3 -> f16 gives the canonical f16 NaN (0x7FFF, sign dropped)
    out[(raw & 0x7F) == 0x7F] = np.uint32(0x7FFFE000).view(np.float32)
    return out


def dequantize_rows(
    scheme: BurnQuant, shape: tuple[int, ...], rows: BurnRows, raw: np.ndarray, r0: int, r1: int
) -> np.ndarray:
    """Rows ``r0:r1`` (their value bytes in ``raw``) as burn's F32 values."""
    n = r1 - r0
    cols = shape[-1] if shape else 1
    if cols == 0:
        return np.empty((n, 0), np.float32)
    codes = codes_of(scheme, raw, n, cols)
    with np.errstate(all="ignore"):
        return _row_scales(rows.grid, rows.block, shape, r0, r1) * codes.astype(np.float32)


def codes_of(scheme: BurnQuant, raw: np.ndarray, n: int, cols: int) -> np.ndarray:
    """The signed codes of ``n`` rows (their value bytes in ``raw``), as burn unpacks them."""
    if scheme.value in _Q8:
        return raw.view(np.int8).reshape(n, cols)
    return _unpack(raw.view("<u4").reshape(n, -1), scheme.bits)[:, :cols]


def code_range(scheme: BurnQuant) -> tuple[int, int]:
    """The codes burn's quantizer writes (``QuantValue::range``): ±(2^(b-1) - 1) for the
    symmetric values, -2^(b-1) … 2^(b-1) - 1 for the full-range ones."""
    half = 1 << (scheme.bits - 1)
    return (-(half - 1), half - 1) if scheme.value.value.endswith("S") else (-half, half - 1)


def _unpack(words: np.ndarray, bits: int) -> np.ndarray:
    """``unpack_q_to_i8s``: value k of a word in bits ``k·bits``, sign-extended from ``bits``."""
    per = 32 // bits
    shifts = np.arange(per, dtype=np.uint32) * bits
    fields = (words[..., None] >> shifts) & np.uint32((1 << bits) - 1)
    signed = (fields.astype(np.uint8) << (8 - bits)).view(np.int8) >> (8 - bits)
    return signed.reshape(words.shape[0], -1)


def _row_scales(
    grid: np.ndarray, block: tuple[int, ...], shape: tuple[int, ...], r0: int, r1: int
) -> np.ndarray:
    """The scale of every element of rows ``r0:r1``: its block's (``BlockLayout::block_of``)."""
    cols = shape[-1] if shape else 1
    lead = shape[:-1]
    idx = np.arange(r0, r1)
    if lead:
        coords = np.unravel_index(idx, lead)
        block_coords = tuple(c // b for c, b in zip(coords, block[:-1], strict=True))
        flat = np.ravel_multi_index(block_coords, grid.shape[:-1])
    else:
        flat = np.zeros(idx.size, dtype=np.intp)
    per_row = grid.reshape(-1, grid.shape[-1])[flat]  # [n, blocks along the last dimension]
    col_block = np.arange(cols) // block[-1]
    return per_row[:, col_block]
