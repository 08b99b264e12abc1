"""Dequantization of a block of rows, in numpy, following each scheme's reference step by step.

Each function returns the rows as the reference computes them, in the reference's own compute
dtype (the caller casts that to the target with the torch-exact kernels):

* fp8 (transformers ``Fp8Dequantize``, DeepSeek ``weight_dequant``): ``codes.to(f32) *
  scale_inv`` per block, in F32.
* compressed-tensors ``_dequantize``: ``(codes.to(scale.dtype) - zero_point) * scale`` in the
  scale's dtype; NVFP4 first divides the scale by the global scale (F32), MXFP4 scales are
  ``2 ** (e - 127)`` in BF16; FP4 codes unpack to BF16.

torch computes BF16/F16 arithmetic on the CPU in F32 and rounds the result once, which is what
``_round`` does here: one product in F32, one torch-exact rounding to the compute dtype.
"""

from __future__ import annotations

import numpy as np

from ..cast.kernels import cast_array
from ..dtypes import DTYPES, DType

F32, BF16 = DTYPES["F32"], DTYPES["BF16"]
# E2M1: sign bit 3, magnitude index in bits 0-2
FP4_VALUES = np.array(
    [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0],
    dtype=np.float32,
)


def to_f32(values: np.ndarray, dtype: DType) -> np.ndarray:
    """Exact widening of any float or int codes to F32 (F32 holds every F8/BF16/F16/int8)."""
    if dtype.is_float:
        return (
            cast_array(values, dtype, F32) if dtype.name in _CASTABLE else values.astype(np.float32)
        )
    return values.astype(np.float32)


_CASTABLE = ("F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2")


def _round(values_f32: np.ndarray, dtype: DType) -> np.ndarray:
    return cast_array(values_f32, F32, dtype)


def expand_blocks(
    scale: np.ndarray, r0: int, r1: int, cols: int, block: tuple[int, int]
) -> np.ndarray:
    """The per-element scale of rows ``r0:r1``: block (i // bm, j // bn)."""
    bm, bn = block
    rows = np.arange(r0, r1) // bm
    col_idx = np.arange(cols) // bn
    return scale[rows][:, col_idx]


def expand_groups(scale: np.ndarray, cols: int, group: int) -> np.ndarray:
    """Per-element scale of a [rows, groups] scale: column j takes group j // group."""
    return np.repeat(scale, group, axis=-1)[..., :cols]


def fp8_block(codes: np.ndarray, codes_dtype: DType, scale_inv_f32: np.ndarray) -> np.ndarray:
    """transformers/DeepSeek: F32 product of the codes and their block's ``scale_inv``."""
    with np.errstate(all="ignore"):
        return to_f32(codes, codes_dtype) * scale_inv_f32


def ct_linear(
    codes_f32: np.ndarray, scale: np.ndarray, scale_dtype: DType, zero_point: np.ndarray | None
) -> np.ndarray:
    """compressed-tensors ``_dequantize`` without a global scale, in ``scale_dtype``:
    ``x_q.to(s.dtype)``, minus ``zero_point.to(s.dtype)``, times ``s``; each op rounded."""
    with np.errstate(all="ignore"):
        x = _round(codes_f32, scale_dtype)
        s = to_f32(scale, scale_dtype)
        if zero_point is not None:
            zp = _round(zero_point.astype(np.float32), scale_dtype)
            x = _round(to_f32(x, scale_dtype) - to_f32(zp, scale_dtype), scale_dtype)
        return _round(to_f32(x, scale_dtype) * s, scale_dtype)


def ct_nvfp4(codes_f32: np.ndarray, scale_f8: np.ndarray, scale_dtype: DType,
             global_scale: np.float32) -> np.ndarray:  # fmt: skip
    """NVFP4: the F8 scale to BF16 (exact), divided by the F32 global scale in F32, times the
    FP4 value in F32, rounded to BF16 (the unpacked values' dtype)."""
    with np.errstate(all="ignore"):
        s = to_f32(cast_array(scale_f8, scale_dtype, BF16), BF16) / np.float32(global_scale)
        return _round(codes_f32 * s.astype(np.float32), BF16)


def ct_mxfp4(codes_f32: np.ndarray, exponents: np.ndarray) -> np.ndarray:
    """MXFP4: ``2 ** (e - 127)`` in BF16, times the FP4 value, rounded to BF16."""
    with np.errstate(all="ignore"):
        s = _round(np.exp2(exponents.astype(np.float32) - np.float32(127.0)), BF16)
        return _round(codes_f32 * to_f32(s, BF16), BF16)


def unpack_fp4(packed: np.ndarray) -> np.ndarray:
    """Two E2M1 codes per byte, low nibble first, as F32 (exact)."""
    out = np.empty((*packed.shape[:-1], packed.shape[-1] * 2), dtype=np.float32)
    out[..., 0::2] = FP4_VALUES[packed & 0x0F]
    out[..., 1::2] = FP4_VALUES[packed >> 4]
    return out


def unpack_int32(packed: np.ndarray, bits: int, cols: int) -> np.ndarray:
    """compressed-tensors ``unpack_from_int32`` along the last dim: element i of a row at bit
    ``i * bits`` of the row's little-endian stream, minus the offset ``2 ** (bits - 1)``."""
    words = packed.astype(np.int64) & 0xFFFFFFFF
    nxt = np.zeros_like(words)
    nxt[..., :-1] = words[..., 1:]
    start = np.arange(cols, dtype=np.int64) * bits
    word, off = start // 32, start % 32
    both = words[..., word] | (nxt[..., word] << 32)
    values = (both >> off) & ((1 << bits) - 1)
    return (values - (1 << (bits - 1))).astype(np.int8)


def unpack_int32_rows(packed: np.ndarray, bits: int, rows: int) -> np.ndarray:
    """The same, packed along dim 0 (compressed-tensors packs asymmetric zero points so)."""
    return unpack_int32(packed.T, bits, rows).T
