"""Round-to-nearest quantization of a block of weight rows, as compressed-tensors computes it.

llm-compressor's data-free path is: a min/max observer per scale group
(``calculate_qparams``), then ``quantize`` (divide, clamp, round) and the compressor's packing.
torch computes it in the weight's dtype ("sd" below): each BF16/F16 operation in F32, rounded
once to the dtype, which is what :meth:`Arith.rd` does (F64 weights compute in F64). Every
step here names the reference step it reproduces; the tests compare the bytes with
llm-compressor's output.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cast.kernels import cast_array
from ..dtypes import DTYPES, DType
from ..quant import kernels as deq
from .schemes import Kind, Scheme, Strategy

F32, F8, BF16 = DTYPES["F32"], DTYPES["F8_E4M3"], DTYPES["BF16"]
FP8_MAX = 448.0
FP4_MAX = 6.0
_EPS = {"BF16": 2.0**-7, "F16": 2.0**-10, "F32": 2.0**-23, "F64": 2.0**-52}


class Arith:
    """Arithmetic in the weight's dtype: compute wide, round once to ``sd``."""

    def __init__(self, sd: DType) -> None:
        self.sd = sd
        self.wide = np.float64 if sd.name == "F64" else np.float32

    def widen(self, values: np.ndarray) -> np.ndarray:
        if self.sd.name == "F64":
            return values.astype(np.float64)
        return deq.to_f32(values, self.sd)

    def rd(self, x: np.ndarray) -> np.ndarray:
        """``x`` (wide) rounded to the weight's dtype, given back wide (exact)."""
        if self.sd.name in ("F32", "F64"):
            return x.astype(self.wide, copy=False)
        return deq.to_f32(cast_array(np.ascontiguousarray(x, np.float32), F32, self.sd), self.sd)

    def store(self, x: np.ndarray) -> np.ndarray:
        """Wide values already exact in ``sd``, as ``sd`` (a scale kept in the weight's dtype)."""
        if self.sd.name == "F64":
            return x.astype(np.float64)
        return cast_array(np.ascontiguousarray(x, np.float32), F32, self.sd)

    @property
    def eps(self) -> float:
        return _EPS[self.sd.name]


@dataclass
class QuantizedRows:
    """One block of rows: the output tensors' rows (by suffix) and the dequantized values."""

    parts: dict[str, np.ndarray]
    values: np.ndarray  # what compressed-tensors' decompression gives back, as F32


def absmax(w: np.ndarray, groups: int) -> np.ndarray:
    """Per group of a row block (rows, groups·g): max(|min(x, 0)|, max(x, 0)), NaN kept."""
    rows = w.shape[0]
    g = w.reshape(rows, groups, -1)
    return np.maximum(-np.minimum(g.min(axis=2), 0), np.maximum(g.max(axis=2), 0))


def global_scale(amax: float, sd: DType) -> np.float32:
    """NVFP4's ``generate_gparam``: 448·6 / absmax in the weight's dtype, then F32; NaN/inf →
    1 (absmax is that of the fused group: q/k/v, gate/up share one)."""
    a = Arith(sd)
    tiny = {"BF16": 2.0**-126, "F16": 2.0**-14, "F32": 2.0**-126, "F64": 2.0**-1022}[sd.name]
    m = np.array([max(amax, tiny)], dtype=a.wide)
    with np.errstate(all="ignore"):
        g = float(a.rd(np.array([FP8_MAX * FP4_MAX], a.wide) / m)[0])
    return np.float32(g if np.isfinite(g) else 1.0)


def quantize_rows(
    w: np.ndarray, sd: DType, scheme: Scheme, gscale: np.float32 | None = None
) -> QuantizedRows:
    """Quantize rows ``w`` (rows, cols; whole 128-row blocks for FP8_BLOCK) of a ``sd`` weight."""
    a = Arith(sd)
    with np.errstate(all="ignore"):
        x = a.widen(w)
        if scheme.kind is Kind.FP8:
            return _fp8(x, a, scheme)
        if scheme.kind is Kind.INT:
            return _int(x, a, scheme)
        if scheme.strategy is Strategy.TENSOR_GROUP:
            assert gscale is not None
            return _nvfp4(x, a, scheme, gscale)
        return _mxfp4(x, a, scheme)


def _scale_of(amax: np.ndarray, a: Arith, half_range: float) -> np.ndarray:
    """``max_val_pos / (bit_range.to(sd) / 2)`` in sd, zeros replaced by sd's eps."""
    s = a.rd(amax / a.wide(half_range))
    s[s == 0] = a.eps
    return s


def _to_fp8(q: np.ndarray) -> np.ndarray:
    return cast_array(np.ascontiguousarray(q, np.float32), F32, F8)


def _fp8(x: np.ndarray, a: Arith, scheme: Scheme) -> QuantizedRows:
    rows, cols = x.shape
    if scheme.strategy is Strategy.CHANNEL:
        scale = _scale_of(absmax(x, 1), a, FP8_MAX)  # (rows, 1)
        full = scale
    else:  # BLOCK: zero-padded to whole blocks (padding never raises an absmax)
        bh, bw = scheme.block or (128, 128)
        nb = -(-cols // bw)
        padded = np.zeros((-(-rows // bh) * bh, nb * bw), dtype=x.dtype)
        padded[:rows, :cols] = x
        blocks = padded.reshape(-1, bh, nb, bw).transpose(0, 2, 1, 3).reshape(-1, nb, bh * bw)
        amax = np.maximum(-np.minimum(blocks.min(axis=2), 0), np.maximum(blocks.max(axis=2), 0))
        scale = _scale_of(amax, a, FP8_MAX)  # (row blocks, col blocks)
        full = np.repeat(np.repeat(scale, bh, axis=0), bw, axis=1)[:rows, :cols]
    q = np.clip(a.rd(x / full) + 0.0, -FP8_MAX, FP8_MAX)  # + the zero point: -0 → +0
    codes = _to_fp8(q)
    values = deq.ct_linear(deq.to_f32(codes, F8), a.store(full), a.sd, None)
    return QuantizedRows(
        {"weight": codes, "weight_scale": a.store(scale)}, deq.to_f32(values, a.sd)
    )


def _int(x: np.ndarray, a: Arith, scheme: Scheme) -> QuantizedRows:
    cols = x.shape[1]
    gs = scheme.group_size or cols
    ng = cols // gs
    qmax = 2 ** (scheme.bits - 1) - 1
    scale = _scale_of(absmax(x, ng), a, float(2**scheme.bits - 1) / 2)  # (rows, groups)
    full = np.repeat(scale, gs, axis=1)
    q = np.rint(np.clip(a.rd(x / full) + 0.0, -qmax - 1, qmax))
    codes = q.astype(np.int8)
    values = deq.ct_linear(q.astype(np.float32), a.store(full), a.sd, None)
    packed = pack_int32(codes, scheme.bits)
    parts = {"weight_packed": packed, "weight_scale": a.store(scale)}
    return QuantizedRows(parts, deq.to_f32(values, a.sd))


def _nvfp4(x: np.ndarray, a: Arith, scheme: Scheme, gscale: np.float32) -> QuantizedRows:
    cols = x.shape[1]
    gs = scheme.group_size or 16
    local = a.rd(absmax(x, cols // gs) / a.wide(FP4_MAX))
    # global_scale (F32) * scale (sd) in F32, rounded to F8 and back; zeros → F8's 0.125
    s32 = np.clip(local.astype(np.float32) * gscale, -FP8_MAX, FP8_MAX)
    s8 = _to_fp8(s32)
    s = deq.to_f32(s8, F8)
    zero = s == 0
    if zero.any():
        s[zero] = 0.125
        s8 = _to_fp8(s)
    eff = s / gscale  # scale.to(F32) / global_scale, in F32
    y = x.astype(np.float32) / np.repeat(eff, gs, axis=1) + np.float32(0.0)
    fp4 = cast_to_fp4(np.clip(y, -FP4_MAX, FP4_MAX))
    values = deq.ct_nvfp4(fp4, np.repeat(s8, gs, axis=1), F8, gscale)
    parts = {"weight_packed": pack_fp4(fp4), "weight_scale": s8}
    return QuantizedRows(parts, deq.to_f32(values, BF16))


def _mxfp4(x: np.ndarray, a: Arith, scheme: Scheme) -> QuantizedRows:
    cols = x.shape[1]
    gs = scheme.group_size or 32
    amax = absmax(x, cols // gs)
    e = _mx_exponent(a.store(amax), a)
    scale = a.rd(np.exp2(e.astype(np.float32) - 127))  # maybe_convert_from_mx_exp, in sd
    scale[scale == 0] = 1.0  # the eps of a uint8 scale dtype
    q = np.clip(a.rd(x / np.repeat(scale, gs, axis=1)) + 0.0, -FP4_MAX, FP4_MAX)
    fp4 = cast_to_fp4(q)
    exps = (127 + np.floor(np.log2(scale))).astype(np.int32).astype(np.uint8)
    values = deq.ct_mxfp4(fp4, np.repeat(exps, gs, axis=1))
    parts = {"weight_packed": pack_fp4(fp4), "weight_scale": exps}
    return QuantizedRows(parts, deq.to_f32(values, BF16))


def _mx_exponent(amax_sd: np.ndarray, a: Arith) -> np.ndarray:
    """``generate_mx_scales``: |max| rounded to a power of two on its own bits (up from 1.75),
    ``127 + floor(log2) - 2`` in sd, clamped to uint8 and rounded."""
    sd = a.sd.name
    mant = {"BF16": 7, "F16": 10, "F32": 23, "F64": 52}[sd]
    expo = {"BF16": 8, "F16": 5, "F32": 8, "F64": 11}[sd]
    uint = {2: np.uint16, 4: np.uint32, 8: np.uint64}[amax_sd.dtype.itemsize]
    bits = amax_sd.view(uint).astype(np.int64)
    add = 1 << (mant - 1 - 1)
    mask = ((1 << (expo + 1)) - 1) << mant
    p2 = np.bitwise_and(bits + add, mask).astype(uint).view(amax_sd.dtype)
    p2w = a.widen(p2)
    e = a.rd(a.rd(np.floor(np.log2(p2w)) + 127) - 2)
    return np.rint(np.clip(e, 0, 255))


def cast_to_fp4(y: np.ndarray) -> np.ndarray:
    """compressed-tensors ``cast_to_fp4``: |y| to the nearest E2M1 magnitude with its tie
    rules (0.25 and 1.25, 2.5, 5 round down; 0.75, 1.75, 3.5 up), times ``sign(y)``, so a
    negative value that rounds to 0 is -0 and 0 itself stays +0."""
    m = np.abs(y)
    conditions = [m <= 0.25, m < 0.75, m <= 1.25, m < 1.75, m <= 2.5, m < 3.5, m <= 5.0]
    values = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0]
    out = np.select(conditions, values, default=6.0).astype(np.float32)
    out[np.isnan(m)] = np.nan
    return out * np.sign(y).astype(np.float32)


def pack_fp4(fp4: np.ndarray) -> np.ndarray:
    """``pack_fp4_to_uint8``: the E2M1 index of each value (sign bit 3 from the sign bit, so -0
    is 8), two per byte, the even column in the low nibble."""
    mag = (np.abs(fp4) * 2).astype(np.int8)
    idx = np.searchsorted(_FP4_DOUBLED, mag).astype(np.uint8)
    idx |= np.signbit(fp4).astype(np.uint8) << 3
    return idx[..., 0::2] | (idx[..., 1::2] << 4)


_FP4_DOUBLED = np.array([0, 1, 2, 3, 4, 6, 8, 12], dtype=np.int8)


def pack_int32(codes: np.ndarray, bits: int) -> np.ndarray:
    """``pack_to_int32`` along rows: ``code + 2**(bits-1)`` at bit ``i·bits`` of the row's
    little-endian word stream, ``ceil(cols·bits/32)`` words."""
    rows, cols = codes.shape
    per = 32 // bits
    words = -(-cols * bits // 32)
    u = np.zeros((rows, words * per), dtype=np.uint32)
    u[:, :cols] = codes.astype(np.int32) + (1 << (bits - 1))
    u = u.reshape(rows, words, per)
    out = np.zeros((rows, words), dtype=np.uint32)
    for k in range(per):
        out |= u[:, :, k] << np.uint32(k * bits)
    return out.view(np.int32)
