"""F32 → F16 / BF16 / F8_E4M3 / F8_E5M2 rounding, branch-free, with the rounded values kept.

Round-to-nearest-even to ``p`` mantissa bits is one float32 addition: for |x| with exponent ``e``
(clamped to the format's normal range), ``|x| + 2**(e + 23 - p)`` has an ulp of ``2**(e - p)``,
so the hardware adder rounds exactly where the narrow format does, subnormals included (the
clamp at the smallest normal exponent gives them its fixed spacing). From the sum ``s`` and the
magic ``m``:

* the narrow code is ``bits(s) - bits(m)`` (the value in ulps) plus the exponent field, and a
  carry out of the mantissa lands in the exponent as it should;
* the rounded value itself is ``s - m``, exact in float32, which the precision report needs: it
  gets the cast's values without widening the narrow result back (a second pass per chunk).

Overflow is a ``minimum`` on the code (to inf, or to ±max for E4M3, which saturates in torch);
NaNs keep torch's codes. Every code equals the table-free reference kernels of ``cast.py`` for
all 2**32 F32 bit patterns (checked once, exhaustively; the tests sample it against torch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .scratch import scratch

try:  # the ufunc itself: np.clip's Python layers cost 3.3 µs a call, a third of the pass
    from numpy._core.umath import clip as _clip
except ImportError:  # numpy 1.x
    _clip = np.clip

_U32 = np.uint32
_F32 = np.float32


@dataclass(frozen=True)
class NarrowFormat:
    bits: int
    mant_bits: int
    min_normal_exp: int  # unbiased exponent of the smallest normal
    max_normal_exp: int
    overflow_code: int  # |code| cap: inf, or ±max where torch saturates
    nan_shift: int  # F16 keeps the top payload bits of a NaN; F8 codes are fixed
    nan_code: int
    max_value: float  # the largest finite value; a rounded value beyond it overflowed
    saturates: bool

    @property
    def sign_shift(self) -> int:
        return 32 - self.bits


NARROW: dict[str, NarrowFormat] = {
    "F16": NarrowFormat(16, 10, -14, 15, 0x7C00, 13, 0x7E00, 65504.0, False),
    "F8_E5M2": NarrowFormat(8, 2, -14, 15, 0x7C, 0, 0x7F, 57344.0, False),
    "F8_E4M3": NarrowFormat(8, 3, -6, 8, 0x7E, 0, 0x7F, 448.0, True),
}
ROUNDED_FROM_F32 = frozenset({*NARROW, "BF16"})  # the targets round_f32 handles


class Rounded(NamedTuple):
    """What :func:`round_f32` measured on the way: |x| and |cast(x)| as F32 (None unless asked),
    and the largest |x| (NaN if there is a NaN), which the report's saturation check needs."""

    magnitude: np.ndarray | None
    rounded: np.ndarray | None
    top: float | None = None


def round_f32(w: np.ndarray, dst: str, out: np.ndarray, values: bool = False) -> Rounded:
    """Write the ``dst`` codes of F32 bits ``w`` (1-D uint32) into ``out`` (uint16 or uint8).

    With ``values`` also give |x| and the magnitude of what the cast gives (inf where the code
    overflowed to inf, 448 where E4M3 saturated, NaN for NaN), for the precision report. Keep
    blocks cache-sized: the narrow formats take about fifteen passes.
    """
    if w.size == 0:  # no values (a [rows, 0] weight): nothing to round or measure
        none = np.empty(0, _F32)
        return Rounded(none, none, 0.0) if values else _NOTHING
    if dst == "BF16":
        return _round_bf16(w, out, values)
    fmt = NARROW[dst]
    p = fmt.mant_bits
    shift = 23 - p
    n = w.size
    a = np.bitwise_and(w, _U32(0x7FFFFFFF), out=scratch("round.a", n, _U32))
    m = np.bitwise_and(a, _U32(0x7F800000), out=scratch("round.m", n, _U32))
    # the exponent of |x|, clamped to the format's normal range
    _clip(m, _U32((127 + fmt.min_normal_exp) << 23), _U32((127 + fmt.max_normal_exp) << 23), out=m)
    m += _U32(shift << 23)  # the magic: 2**(e + 23 - p)
    s = np.add(a.view(_F32), m.view(_F32), out=scratch("round.s", n, _F32))
    top = int(a.max())  # overflow and NaN are rare: fixed only in blocks that have them
    over = top >= _LIMIT_BITS[dst]
    rounded = None
    if values:
        rounded = np.subtract(s, m.view(_F32), out=scratch("round.rounded", n, _F32))
        if over:
            big = rounded > _F32(fmt.max_value)  # a carry past the largest finite value
            rounded[big] = _F32(fmt.max_value) if fmt.saturates else _F32(np.inf)
    code = np.subtract(s.view(_U32), m, out=s.view(_U32))  # the value in ulps of its binade...
    m >>= _U32(shift)  # ...plus the exponent field (m is a power of two)...
    code += m
    code -= _U32((127 + shift + fmt.min_normal_exp) << p)  # ...less the bias and implicit 1
    if over:
        np.minimum(code, _U32(fmt.overflow_code), out=code)
        if top > 0x7F800000:
            nan = a > _U32(0x7F800000)
            payload = (a[nan] >> _U32(fmt.nan_shift)) & _U32(0x3FF) if fmt.nan_shift else _U32(0)
            code[nan] = _U32(fmt.nan_code) | payload
    sign = np.bitwise_xor(w, a, out=m)
    sign >>= _U32(fmt.sign_shift)
    code |= sign
    np.copyto(out, code, casting="unsafe")
    return Rounded(a.view(_F32), rounded, float(_U32(top).view(_F32))) if values else _NOTHING


def _round_bf16(w: np.ndarray, out: np.ndarray, values: bool) -> Rounded:
    """Round-to-nearest-even on the top 16 bits (a carry into the exponent is exactly right, up
    to inf); every NaN becomes 0xFFFF, as in torch's vector path. The rounded value is the sum
    with its sign and low half cleared."""
    n = w.size
    r = np.right_shift(w, _U32(16), out=scratch("round.m", n, _U32))
    r &= _U32(1)
    r += w
    r += _U32(0x7FFF)
    a = np.bitwise_and(w, _U32(0x7FFFFFFF), out=scratch("round.a", n, _U32))
    any_nan = int(a.max()) > 0x7F800000
    nan = a > _U32(0x7F800000) if any_nan else None
    rounded = None
    if values:
        rounded = np.bitwise_and(r, _U32(0x7FFF0000), out=scratch("round.rounded", n, _U32))
        rounded = rounded.view(_F32)  # no carry reaches the sign bit
        if any_nan:
            rounded[nan] = np.nan
    r >>= _U32(16)
    np.copyto(out, r, casting="unsafe")
    if any_nan:
        out[nan] = 0xFFFF
    return Rounded(a.view(_F32), rounded) if values else _NOTHING


_NOTHING = Rounded(None, None)
_LIMIT_BITS = {k: int(np.float32(f.max_value).view(_U32)) for k, f in NARROW.items()}
