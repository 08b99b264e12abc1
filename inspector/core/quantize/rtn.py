"""Round-to-nearest quantization of a block of weight rows, as compressed-tensors computes it.

llm-compressor's data-free path is: a min/max observer per scale group
(``calculate_qparams``), then ``quantize`` (divide, add the zero point, clamp, round) and the
compressor's packing. torch computes it in the weight's dtype ("sd" below): each BF16/F16
operation in F32, rounded once to the dtype, which is what :meth:`Arith.rd` does. Every step
names the reference step it reproduces; the tests compare the bytes with llm-compressor's.

The values each block dequantizes to are computed on the way (compressed-tensors'
``_dequantize``, as :mod:`..quant.kernels` does for a file), for the precision report.
Kernels are written for few passes over the block: this is the quantize and preview hot path.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..cast.kernels import cast_array
from ..dtypes import DTYPES, DType
from ..quant.kernels import FP4_VALUES, to_f32
from .schemes import Kind, Scheme, Strategy
from .widened import WidenedRows

F32, F8, BF16 = DTYPES["F32"], DTYPES["F8_E4M3"], DTYPES["BF16"]
FP8_MAX = 448.0
FP4_MAX = 6.0
_EPS = {"BF16": 2.0**-7, "F16": 2.0**-10, "F32": 2.0**-23}
_TINY = {"BF16": 2.0**-126, "F16": 2.0**-14, "F32": 2.0**-126}
# |y| at or past each bound moves up one E2M1 magnitude (0, .5, 1, 1.5, 2, 3, 4, 6):
# cast_to_fp4 rounds 0.25, 1.25, 2.5 and 5 down and 0.75, 1.75, 3.5 up
_FP4_BOUNDS = np.array(
    [np.nextafter(np.float32(0.25), np.float32(1)), 0.75,
     np.nextafter(np.float32(1.25), np.float32(2)), 1.75,
     np.nextafter(np.float32(2.5), np.float32(3)), 3.5,
     np.nextafter(np.float32(5.0), np.float32(6))], dtype=np.float32,
)  # fmt: skip
_TABLED = ("BF16", "F16")  # 16-bit weight dtypes: a rounded value indexes a table of 65536
_F8_VALUES = to_f32(np.arange(256, dtype=np.uint8).view(F8.numpy), F8)


class Arith:
    """Arithmetic in the weight's dtype (BF16, F16, F32): compute in F32, round once to sd."""

    def __init__(self, sd: DType) -> None:
        if sd.name not in _EPS:
            raise ValueError(f"no quantization of {sd.name} weights")
        self.sd = sd

    def widen(self, values: np.ndarray) -> np.ndarray:
        return to_f32(values, self.sd)

    def rd(self, x: np.ndarray) -> np.ndarray:
        """``x`` (F32, a fresh array: rounded in place) rounded to sd, as F32 (exact)."""
        if self.sd.name == "BF16":  # round-to-nearest-even on the top half of the bits
            u = x.view(np.uint32)
            low = np.right_shift(u, np.uint32(16))
            low &= np.uint32(1)
            low += np.uint32(0x7FFF)
            u += low
            u &= np.uint32(0xFFFF0000)
            return x
        if self.sd.name == "F16":
            return x.astype(np.float16).astype(np.float32)
        return x

    def store(self, x: np.ndarray) -> np.ndarray:
        """F32 values exact in sd, as sd (a scale kept in the weight's dtype)."""
        return cast_array(np.ascontiguousarray(x, np.float32), F32, self.sd)

    def bits(self, y: np.ndarray) -> np.ndarray:
        """The 16-bit sd's bit patterns of sd-exact F32 values (indices into a table)."""
        if self.sd.name == "BF16":  # as intp: numpy's take converts uint32 indices slowly
            return np.right_shift(y.view(np.uint32), 16, dtype=np.intp, casting="unsafe")
        if self.sd.name == "F16":
            return y.astype(np.float16).view(np.uint16)
        raise ValueError(f"{self.sd.name} has no 16-bit patterns")

    @property
    def eps(self) -> np.float32:
        return np.float32(_EPS[self.sd.name])


def _frozen(table: np.ndarray) -> np.ndarray:
    """A cached table, read-only: every caller shares it."""
    table.flags.writeable = False
    return table


def _every_value(a: Arith) -> np.ndarray:
    """Every bit pattern of a 16-bit sd, as F32, at the index of its bits."""
    return a.widen(np.arange(1 << 16, dtype=np.uint16).view(a.sd.numpy))


@dataclass
class QuantizedRows:
    """One block of rows: the output tensors' rows (by suffix) and the dequantized values."""

    parts: dict[str, np.ndarray]
    values: np.ndarray | None  # what compressed-tensors' decompression gives back, as F32
    source: np.ndarray | None = None  # the rows quantized, as F32


def global_scale(amax: float, sd: DType) -> np.float32:
    """NVFP4's ``generate_gparam``: ``448·6 / absmax`` in the weight's dtype, then F32; NaN/inf
    → 1 (absmax is that of the fused group: q/k/v, gate/up share one). torch computes a Python
    number over a tensor as the tensor's reciprocal times the number: two roundings, not one."""
    a = Arith(sd)
    m = np.array([max(amax, _TINY[sd.name])], dtype=np.float32)
    with np.errstate(all="ignore"):
        g = float(a.rd(a.rd(np.float32(1.0) / m) * np.float32(FP8_MAX * FP4_MAX))[0])
    return np.float32(g if np.isfinite(g) else 1.0)


def quantize_rows(
    w: np.ndarray,
    sd: DType,
    scheme: Scheme,
    gscale: np.float32 | None = None,
    measure: bool = True,
    pack: bool = True,
) -> QuantizedRows:
    """Quantize rows ``w`` (rows, cols; whole 128-row blocks for FP8_BLOCK) of a ``sd`` weight;
    ``measure`` False skips the dequantized values (a save without a report), ``pack`` False
    the output tensors (a preview)."""
    return quantize_widened(WidenedRows(w, sd), scheme, gscale, measure, pack)


def quantize_widened(
    rows: WidenedRows,
    scheme: Scheme,
    gscale: np.float32 | None = None,
    measure: bool = True,
    pack: bool = True,
) -> QuantizedRows:
    """:func:`quantize_rows` of rows already widened (the preview widens a block once for all
    its schemes)."""
    a = Arith(rows.sd)
    with np.errstate(all="ignore"):
        if scheme.kind is Kind.FP8:
            q = _fp8(rows, a, scheme, measure, pack)
        elif scheme.kind is Kind.INT:
            q = _int(rows, a, scheme, measure, pack)
        elif scheme.strategy is Strategy.TENSOR_GROUP:
            assert gscale is not None
            q = _nvfp4(rows, a, scheme, gscale, measure, pack)
        else:
            q = _mxfp4(rows, a, scheme, measure, pack)
    q.source = rows.x
    return q


def _scale_of(amax: np.ndarray, a: Arith, half_range: float) -> np.ndarray:
    """``max_val_pos / (bit_range.to(sd) / 2)`` in sd, zeros replaced by sd's eps."""
    s = a.rd(amax / np.float32(half_range))
    s[s == 0] = a.eps
    return s


def _grouped(x: np.ndarray, groups: int) -> np.ndarray:
    return x.reshape(x.shape[0], groups, -1)


def _fp8(rows: WidenedRows, a: Arith, scheme: Scheme, measure: bool, pack: bool) -> QuantizedRows:
    x = rows.x
    nrows, cols = rows.shape
    padded = x
    if scheme.strategy is Strategy.CHANNEL:
        scale = _scale_of(rows.absmax(1), a, FP8_MAX)  # (rows, 1)
        y = a.rd(x / scale)
    else:  # BLOCK: zero-padded to whole blocks (padding never raises an absmax)
        bh, bw = scheme.block or (128, 128)
        nb, rb = -(-cols // bw), -(-nrows // bh)
        if (rb * bh, nb * bw) != (nrows, cols):
            padded = np.zeros((rb * bh, nb * bw), dtype=np.float32)
            padded[:nrows, :cols] = x
            amax = np.abs(padded.reshape(rb, bh, nb, bw)).max(axis=(1, 3))
        else:
            amax = rows.block_absmax(bh, bw)
        scale = _scale_of(amax, a, FP8_MAX)  # (row blocks, col blocks)
        blocks = padded.reshape(rb, bh, nb, bw) / scale[:, None, :, None]
        y = np.ascontiguousarray(a.rd(blocks).reshape(rb * bh, nb * bw)[:nrows, :cols])
    codes, values = _fp8_codes_values(y, a, measure, pack)
    parts = {"weight": codes, "weight_scale": a.store(scale)} if pack else {}
    if values is None:
        return QuantizedRows(parts, None)
    if scheme.strategy is Strategy.CHANNEL:
        values *= scale
    else:
        full = values
        if padded is not x:
            full = np.zeros(padded.shape, dtype=np.float32)
            full[:nrows, :cols] = values
        full.reshape(rb, bh, nb, bw)[...] *= scale[:, None, :, None]
        values = np.ascontiguousarray(full[:nrows, :cols])
    return QuantizedRows(parts, a.rd(values))


def _fp8_codes_values(
    y: np.ndarray, a: Arith, measure: bool, pack: bool
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The F8 codes of sd-exact ``y`` (``y + 0`` clamped to ±448, then ``.to(F8)``) and their
    values: by a table of every sd value where sd has 16 bits, else computed."""
    if a.sd.name in _TABLED:
        codes_of, values_of = _fp8_table(a.sd.name)
        idx = a.bits(y)
        return (codes_of.take(idx) if pack else None), (values_of.take(idx) if measure else None)
    y += np.float32(0.0)  # the zero point: -0 becomes +0
    np.clip(y, -FP8_MAX, FP8_MAX, out=y)
    codes = cast_array(y, F32, F8)  # torch's .to(float8_e4m3fn) (F32 weights, and the tables)
    return codes, (_F8_VALUES.take(codes.view(np.uint8)) if measure else None)


@functools.cache
def _fp8_table(sd_name: str) -> tuple[np.ndarray, np.ndarray]:
    """For every value of a 16-bit sd (indexed by its bits): its F8 code and that code's value,
    computed by the same steps as an F32 weight's."""
    a = Arith(DTYPES[sd_name])
    with np.errstate(all="ignore"):
        codes, values = _fp8_codes_values(_every_value(a), Arith(F32), True, True)
    assert codes is not None and values is not None
    return _frozen(codes.view(np.uint8).view(F8.numpy)), _frozen(values)


def _int(rows: WidenedRows, a: Arith, scheme: Scheme, measure: bool, pack: bool) -> QuantizedRows:
    x = rows.x
    cols = x.shape[1]
    gs = scheme.group_width(cols)
    qmax = 2 ** (scheme.bits - 1) - 1
    scale = _scale_of(rows.absmax(cols // gs), a, float(2**scheme.bits - 1) / 2)
    q = a.rd(_grouped(x, cols // gs) / scale[:, :, None])  # (rows, groups, group size)
    q += np.float32(0.0)
    np.clip(q, -qmax - 1, qmax, out=q)
    np.rint(q, out=q)
    if not np.isfinite(scale).all():  # a NaN or inf in a group makes its codes NaN there:
        q[np.isnan(q)] = 0  # torch's .to(int8) of NaN is 0 (numpy's conversion is undefined)
    parts = {}
    if pack:
        packed = pack_int32(q.reshape(x.shape), scheme.bits)
        parts = {"weight_packed": packed, "weight_scale": a.store(scale)}
    if not measure:
        return QuantizedRows(parts, None)
    q *= scale[:, :, None]  # _dequantize: code.to(sd) * scale, in sd
    return QuantizedRows(parts, a.rd(q).reshape(x.shape))


def _fp4_codes(y: np.ndarray) -> np.ndarray:
    """compressed-tensors ``cast_to_fp4`` and ``pack_fp4_to_uint8``'s index in one: the E2M1
    magnitude index of |y| with its tie rules, bit 3 set where y < 0 (``sign(y) * value``
    makes a negative that rounds to 0 a -0, whose sign bit the packer keeps). A NaN gets 0:
    magnitude index 0 (its int8 conversion), and ``sign(NaN)`` is 0 (see _bf16_nan_codes)."""
    m = np.abs(y)
    code = (m >= _FP4_BOUNDS[0]).view(np.uint8)
    for b in _FP4_BOUNDS[1:]:
        code += (m >= b).view(np.uint8)
    code |= (y < 0).view(np.uint8) << np.uint8(3)
    return code


def _bf16_nan_codes(code: np.ndarray, y: np.ndarray) -> None:
    """A NaN quotient of a BF16 weight gets code 8 (-0): compressed-tensors computes it in BF16,
    and torch's vectorised F32→BF16 conversion writes a NaN as 0xFFFF, whose sign bit the
    packer's ``signbit`` keeps (F32 and F16 NaNs reach it positive: code 0)."""
    code[np.isnan(y)] = 8


@functools.cache
def _fp4_table(sd_name: str) -> tuple[np.ndarray, np.ndarray]:
    """MXFP4's code of every value of a 16-bit sd (``y + 0`` clamped to ±6, then E2M1), and
    that code's value."""
    y = _every_value(Arith(DTYPES[sd_name]))
    with np.errstate(all="ignore"):
        y += np.float32(0.0)
        np.clip(y, -FP4_MAX, FP4_MAX, out=y)
    code = _fp4_codes(y)
    if sd_name == "BF16":
        _bf16_nan_codes(code, y)
    return _frozen(code), _frozen(FP4_VALUES.take(code))


def _nvfp4(
    rows: WidenedRows,
    a: Arith,
    scheme: Scheme,
    gscale: np.float32,
    measure: bool,
    pack: bool,
) -> QuantizedRows:
    x = rows.x
    cols = x.shape[1]
    gs = scheme.group_width(cols)
    local = a.rd(rows.absmax(cols // gs) / np.float32(FP4_MAX))
    # global_scale (F32) * scale (sd) in F32, rounded to F8 and back; zeros → F8's eps 0.125
    s32 = np.clip(local * gscale, -FP8_MAX, FP8_MAX)
    s8 = cast_array(s32, F32, F8)
    s = _F8_VALUES.take(s8.view(np.uint8))
    if (s == 0).any():
        s[s == 0] = 0.125
        s8 = cast_array(s, F32, F8)
    eff = s / gscale  # scale.to(F32) / global_scale, in F32
    y = _grouped(x, cols // gs) / eff[:, :, None]
    y += np.float32(0.0)
    code = _fp4_codes(y)
    if a.sd.name == "BF16" and not (np.isfinite(local).all() and np.isfinite(eff).all()):
        _bf16_nan_codes(code, y)  # only a non-finite weight or scale makes a NaN quotient
    parts = {"weight_packed": pack_fp4(code.reshape(x.shape)), "weight_scale": s8} if pack else {}
    if not measure:
        return QuantizedRows(parts, None)
    # ct_nvfp4: the F4 value times (scale / global scale), in F32, rounded to BF16
    values = FP4_VALUES.take(code)
    values *= eff[:, :, None]
    return QuantizedRows(parts, Arith(BF16).rd(values).reshape(x.shape))


# Two of compressed-tensors' roundings to BF16 are left out of MXFP4: they cannot change a bit
# (and the tests compare every byte with llm-compressor's).
# - An F4 value (two significant bits) times a power of two in BF16 (2⁻¹²⁷ at least) is a BF16
#   value or ±inf, and NaN only as the machine's default NaN, which BF16 rounding keeps.
# - A BF16 weight divided by a power of two no larger than 1 only moves its exponent up (an F32
#   overflow is an infinity either way).
def _mxfp4(rows: WidenedRows, a: Arith, scheme: Scheme, measure: bool, pack: bool) -> QuantizedRows:
    x = rows.x
    cols = x.shape[1]
    gs = scheme.group_width(cols)
    e = _mx_exponent(a.store(rows.absmax(cols // gs)), a)
    scale = a.rd(np.exp2(e - np.float32(127)))  # maybe_convert_from_mx_exp, in sd
    scale[scale == 0] = 1.0  # the eps of a uint8 scale dtype
    y = _grouped(x, cols // gs) / scale[:, :, None]
    if not (a.sd.name == "BF16" and scale.max() <= 1):  # else exact (see above)
        y = a.rd(y)
    exps = _scale_bytes(scale)
    parts: dict[str, np.ndarray] = {}
    if a.sd.name in _TABLED and not pack:  # a preview: each value's F4 value, no codes
        values = _fp4_table(a.sd.name)[1].take(a.bits(y))
    else:
        if a.sd.name in _TABLED:
            code = _fp4_table(a.sd.name)[0].take(a.bits(y))
        else:
            y += np.float32(0.0)
            np.clip(y, -FP4_MAX, FP4_MAX, out=y)
            code = _fp4_codes(y)
        if pack:
            parts = {"weight_packed": pack_fp4(code.reshape(x.shape)), "weight_scale": exps}
        if not measure:
            return QuantizedRows(parts, None)
        values = FP4_VALUES.take(code)
    # ct_mxfp4: 2 ** (e - 127) in BF16 times the F4 value, rounded to BF16
    s = Arith(BF16).rd(np.exp2(exps.astype(np.float32) - np.float32(127)))
    values *= s[:, :, None]  # exact in BF16 already (see above): not rounded again
    return QuantizedRows(parts, values.reshape(x.shape))


def _scale_bytes(scale: np.ndarray) -> np.ndarray:
    """``127 + floor(log2(scale)).to(int32)``, then uint8: torch converts an infinite or NaN
    exponent to int32's minimum, whose low byte is 0, so such a group's byte is 127 (numpy's
    conversion of them is undefined)."""
    e = np.floor(np.log2(scale))
    e[~np.isfinite(e)] = 0
    return (e.astype(np.int32) + 127).astype(np.uint8)


def _mx_exponent(amax_sd: np.ndarray, a: Arith) -> np.ndarray:
    """``generate_mx_scales``: |max| rounded to a power of two on its own bits (up from 1.75),
    ``127 + floor(log2) - 2`` in sd, clamped to uint8 and rounded (as F32)."""
    mant = {"BF16": 7, "F16": 10, "F32": 23}[a.sd.name]
    expo = {"BF16": 8, "F16": 5, "F32": 8}[a.sd.name]
    uint = {2: np.uint16, 4: np.uint32}[amax_sd.dtype.itemsize]
    bits = amax_sd.view(uint).astype(np.int64)
    mask = ((1 << (expo + 1)) - 1) << mant
    p2 = np.bitwise_and(bits + (1 << (mant - 2)), mask).astype(uint).view(amax_sd.dtype)
    e = a.rd(a.rd(np.floor(np.log2(a.widen(p2))) + np.float32(127)) - np.float32(2))
    return np.rint(np.clip(e, 0, 255))


def pack_fp4(code: np.ndarray) -> np.ndarray:
    """``pack_fp4_to_uint8``: two E2M1 codes per byte, the even column in the low nibble."""
    return code[..., 0::2] | (code[..., 1::2] << np.uint8(4))


def pack_int32(q: np.ndarray, bits: int) -> np.ndarray:
    """``pack_to_int32`` along rows of integer-valued ``q``: ``q + 2**(bits-1)`` at bit
    ``i·bits`` of the row's little-endian word stream, ``ceil(cols·bits/32)`` words."""
    rows, cols = q.shape
    per = 32 // bits
    words = -(-cols * bits // 32)
    u = np.zeros((rows, words * per), dtype=np.uint32)
    np.add(q, np.float32(1 << (bits - 1)), out=u[:, :cols], casting="unsafe")
    u = u.reshape(rows, words, per)
    out = u[:, :, 0].copy()
    for k in range(1, per):
        out |= u[:, :, k] << np.uint32(k * bits)
    return out.view(np.int32)
