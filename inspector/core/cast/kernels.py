"""Cast float arrays between F64/F32/F16/BF16/F8_E4M3/F8_E5M2 bit-identically to ``torch.Tensor.to``.

Plain numpy/ml_dtypes casts differ from torch in four ways, all handled here:

* F64 → F16/BF16/F8 rounds through F32 in torch (double rounding), so we do too.
* → F8_E4M3 saturates out-of-range values and ±inf to ±448 in torch (ml_dtypes gives NaN).
* NaN bit patterns: torch's vectorised CPU kernels quiet NaNs and keep the payload (F16C rules),
  write F32/F64 → BF16 NaNs as 0xFFFF, and F8/F16 → BF16 NaNs as 0x7FC0; the F8 encodings are
  0x7F/0xFF with the sign kept. (torch's scalar tail loop differs for F16→F32 and F64→BF16 NaNs,
  so for those two pairs torch itself is not consistent; we follow its vectorised path.)
* Speed: numpy's F32→F16 and the ml_dtypes casts run at 0.1–1 GB/s; the paths below are integer
  bit tricks or lookup tables over every source bit pattern (8- and 16-bit sources).

Every path is proven bit-exact against torch in ``tests/core/test_cast.py`` (exhaustively for 8- and
16-bit sources, by edge values and large random bit samples for F32/F64).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..dtypes import CAST_TARGETS, DType
from .narrow_float import round_f32

_U = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@dataclass(frozen=True)
class FloatFormat:
    """What a float dtype can represent: used to know when a cast is exact without looking."""

    mant_bits: int  # explicit mantissa bits
    min_exp: int  # exponent of the smallest subnormal (its value is 2**min_exp)
    max_finite: float
    has_inf: bool


FORMATS: dict[str, FloatFormat] = {
    "F64": FloatFormat(52, -1074, float(np.finfo(np.float64).max), True),
    "F32": FloatFormat(23, -149, float(np.finfo(np.float32).max), True),
    "F16": FloatFormat(10, -24, 65504.0, True),
    "BF16": FloatFormat(7, -133, float(np.uint32(0x7F7F0000).view(np.float32)), True),
    "F8_E4M3": FloatFormat(3, -9, 448.0, False),
    "F8_E5M2": FloatFormat(2, -16, 57344.0, True),
}


def can_cast(src: DType, dst: DType) -> bool:
    """True when :func:`cast_array` supports the pair (identity included)."""
    return src.name in CAST_TARGETS and dst.name in CAST_TARGETS


def is_exact_cast(src: DType, dst: DType) -> bool:
    """True when every value of ``src`` is exactly representable in ``dst`` (a widening cast).

    Such casts are lossless by construction, so the precision report needs no arithmetic.
    """
    a, b = FORMATS[src.name], FORMATS[dst.name]
    return (
        b.mant_bits >= a.mant_bits
        and b.min_exp <= a.min_exp
        and b.max_finite >= a.max_finite
        and (b.has_inf or not a.has_inf)
    )


def saturates(dst: DType) -> bool:
    """True when torch clamps out-of-range values (and ±inf) to ±max instead of giving inf."""
    return dst.name == "F8_E4M3"


def cast_array(values: np.ndarray, src: DType, dst: DType) -> np.ndarray:
    """``values`` (numpy array of ``src.numpy``, any shape, may be read-only) cast to ``dst.numpy``.

    The result is bit-identical to ``torch.from_numpy(values).to(dst)`` and never aliases a
    read-only input except for the identity cast, which returns ``values`` itself.
    """
    if src.name == dst.name:
        return values
    if not can_cast(src, dst):
        raise ValueError(f"cannot cast {src.name} to {dst.name}")
    shape = values.shape
    flat = np.ascontiguousarray(values).reshape(-1)
    out = cast_bits(flat.view(_U[flat.dtype.itemsize]), src, dst)
    return out.view(dst.numpy).reshape(shape)


def cast_bits(bits: np.ndarray, src: DType, dst: DType) -> np.ndarray:
    """:func:`cast_array` on raw bits: ``bits`` is a 1-D unsigned-int view of ``src`` values, the
    result the unsigned-int bits of ``dst``. Works without ml_dtypes (0.5 s to import)."""
    if src.name == dst.name:
        return bits
    kernel = _KERNELS[src.name]
    with np.errstate(all="ignore"):  # NaN/inf/overflow are data here, not mistakes
        if bits.size <= _BLOCK or (src.name, dst.name) in _UNBLOCKED or src.bits <= 16:
            return kernel(bits, dst.name)
        # Multi-pass kernels run ~3x faster when each pass stays in the CPU cache.
        out = np.empty(bits.size, dtype=_U[(dst.bits + 7) // 8])
        for i in range(0, bits.size, _BLOCK):
            out[i : i + _BLOCK] = kernel(bits[i : i + _BLOCK], dst.name)
    return out


_BLOCK = 1 << 16  # elements per cache-sized block
# single-pass casts (hardware conversion, table lookup) gain nothing from blocking
_UNBLOCKED = frozenset({("F64", "F32"), ("F32", "F64"), ("BF16", "F32")})


# -- F32 sources: the core kernels --------------------------------------------------------------


def _from_f32(w: np.ndarray, dst: str) -> np.ndarray:
    if dst == "F32":
        return w
    if dst == "F64":
        return w.view(np.float32).astype(np.float64)  # hardware cvtss2sd, as torch
    out = np.empty(w.size, dtype=np.uint16 if dst in ("F16", "BF16") else np.uint8)
    round_f32(w, dst, out)
    return out


def _from_f64(bits: np.ndarray, dst: str) -> np.ndarray:
    # torch casts F64 → narrower floats through F32: double rounding is part of the contract.
    w = bits.view(np.float64).astype(np.float32).view(np.uint32)
    return _from_f32(w, dst)


# -- 8- and 16-bit sources: exact widening to F32, then a table over all bit patterns -------------


def _widen_to_f32(src: str) -> np.ndarray:
    """F32 bits of every bit pattern of an 8/16-bit ``src``, NaNs as torch's widening makes them."""
    if src == "BF16":
        return np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)
    if src == "F16":
        w = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
        nan = (w & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
        w[nan] |= np.uint32(0x00400000)  # quiet, payload kept (F16C vcvtph2ps)
        return w
    if src == "F8_E5M2":
        # E5M2 is the top byte of an F16; torch widens through F16.
        h = np.arange(256, dtype=np.uint16) << np.uint16(8)
        return _widen_to_f32("F16")[h]
    if src == "F8_E4M3":  # 4 exponent bits (bias 7), 3 mantissa bits, no inf
        b = np.arange(256, dtype=np.uint32)
        e, m = (b >> np.uint32(3)) & np.uint32(15), (b & np.uint32(7)).astype(np.float64)
        mag = np.where(e == 0, np.ldexp(m, -9), np.ldexp(8 + m, e.astype(np.int64) - 10))
        w = mag.astype(np.float32).view(np.uint32) | ((b & np.uint32(0x80)) << np.uint32(24))
        nan = (b & np.uint32(0x7F)) == np.uint32(0x7F)
        w[nan] = np.uint32(0x7FF00000) | (b[nan] << np.uint32(24))
        return w
    raise ValueError(src)


# torch writes these NaNs without going through its F32 vector kernel: sign dropped, 0x7FC0.
_NAN_OVERRIDE = {("F16", "BF16"): 0x7FC0, ("F8_E4M3", "BF16"): 0x7FC0, ("F8_E5M2", "BF16"): 0x7FC0}


@functools.cache
def _table(src: str, dst: str) -> np.ndarray:
    """``dst`` bits for every ``src`` bit pattern (256 or 65536 entries), read-only."""
    w = _widen_to_f32(src)
    lut = np.array(_from_f32(w, dst), copy=True)
    override = _NAN_OVERRIDE.get((src, dst))
    if override is not None:
        lut[(w & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)] = override
    lut.flags.writeable = False
    return lut


def _from_small(src: str):
    def kernel(bits: np.ndarray, dst: str) -> np.ndarray:
        if src == "BF16" and dst in ("F32", "F64"):
            w = bits.astype(np.uint32)
            w <<= np.uint32(16)
            return w if dst == "F32" else w.view(np.float32).astype(np.float64)
        return _table(src, dst)[bits]

    return kernel


_KERNELS = {
    "F64": _from_f64,
    "F32": _from_f32,
    "F16": _from_small("F16"),
    "BF16": _from_small("BF16"),
    "F8_E4M3": _from_small("F8_E4M3"),
    "F8_E5M2": _from_small("F8_E5M2"),
}
