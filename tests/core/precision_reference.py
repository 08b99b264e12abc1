"""The float64 reference for the report arithmetic: inspector.core.cast.precision as it was before it
measured narrowing casts of 32-bit sources in float32. Tests hold the fast version to it.

What a cast loses, measured chunk by chunk while casting (no second pass over the data).

All arithmetic is in float64 between the original and the cast values, so it is exact for every
cast target. Definitions (the ``cast --report`` JSON uses them):

* ``max_abs_err`` / ``mean_abs_err`` / ``max_rel_err`` (|err| / |orig| over orig ≠ 0): over values
  that are finite before and after and did not overflow. One rule for every target: a value that
  overflowed (to ±inf, or saturated to ±448 by F8_E4M3) is counted in ``overflow`` and left out of
  the error figures, so they stay meaningful. When no value is left to measure (every value
  overflowed) the three are ``None`` (JSON null), never 0.
* ``overflow``: finite values that became ±inf, plus values torch saturated to ±max (F8_E4M3 has no
  inf: it clamps |x| beyond the rounding range of 448, and ±inf, to ±448).
* ``underflow``: non-zero values that became zero.
* ``nan``: NaN values in the output. Casting with torch semantics never creates a NaN (E4M3
  saturates instead), so these are the NaNs the tensor already had.
* ``lossless``: every non-NaN value is unchanged (so it round-trips exactly); NaNs stay NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from inspector.core.cast.kernels import FORMATS, cast_array, is_exact_cast, saturates
from inspector.core.dtypes import DTYPES, DType

_F64 = DTYPES["F64"]
_BLOCK = 1 << 16  # elements: keeps the float64 temporaries in the CPU cache


@dataclass
class ErrorStats:
    max_abs_err: float | None = 0.0
    mean_abs_err: float | None = 0.0
    max_rel_err: float | None = 0.0
    mean_rel_err: float | None = 0.0
    rms_rel_err: float | None = 0.0
    overflow: int = 0
    underflow: int = 0
    nan: int = 0
    lossless: bool = True


class Float64ErrorAccumulator:
    """Feed it (original chunk, cast chunk) pairs in order; :meth:`result` gives the totals."""

    def __init__(self, src: DType, dst: DType) -> None:
        self.src, self.dst = src, dst
        self.exact = is_exact_cast(src, dst)
        # E4M3 saturation: beyond max + half an ulp (464) the value would have rounded past 448
        self.sat_limit: float | None = None
        if saturates(dst):
            fmt = FORMATS[dst.name]
            ulp = 2.0 ** (math.floor(math.log2(fmt.max_finite)) - fmt.mant_bits)
            self.sat_limit = fmt.max_finite + ulp / 2
        self.max_abs = 0.0
        self.max_rel = 0.0
        self.sum_abs = 0.0
        self.count = 0
        self.sum_rel = 0.0
        self.sum_sq_rel = 0.0
        self.count_rel = 0
        self.overflow = 0
        self.underflow = 0
        self.nan = 0
        self.changed = 0

    def update(self, orig: np.ndarray, cast: np.ndarray) -> None:
        orig, cast = orig.reshape(-1), cast.reshape(-1)
        if self.exact:  # widening: every value is kept; only NaNs need counting
            self.nan += _count_nan(orig, self.src)
            return
        with np.errstate(all="ignore"):
            for i in range(0, orig.size, _BLOCK):
                self._block(orig[i : i + _BLOCK], cast[i : i + _BLOCK])

    def _block(self, orig: np.ndarray, cast: np.ndarray) -> None:
        a = _values(orig, self.src)
        b = _values(cast, self.dst)
        ad = b - a
        np.abs(ad, out=ad)
        m = float(ad.max())
        if np.isfinite(m):  # common case: every value finite before and after
            self._finite(a, b, ad, m)
            return
        nan_a = np.isnan(a)
        self.nan += int(np.count_nonzero(np.isnan(b)))
        fin_a = np.isfinite(a)
        fin_b = np.isfinite(b)
        both = fin_a & fin_b
        # inf → same inf is kept; finite → inf, inf → ±max (saturation) are overflow
        self.overflow += int(np.count_nonzero((fin_a & ~fin_b) | (~fin_a & ~nan_a & fin_b)))
        if self.sat_limit is not None:
            saturated = both & (np.abs(a) > self.sat_limit)
            self.overflow += int(np.count_nonzero(saturated))
            both &= ~saturated
        self.underflow += int(np.count_nonzero((b == 0) & (a != 0) & ~nan_a))
        self.changed += int(np.count_nonzero((a != b) & ~nan_a))
        if both.any():
            a, b, ad = a[both], b[both], ad[both]
            self._accumulate(a, ad, float(ad.max()))

    def _finite(self, a: np.ndarray, b: np.ndarray, ad: np.ndarray, m: float) -> None:
        if m == 0.0:
            self.count += a.size
            self.count_rel += int(np.count_nonzero(a))
            return
        self.changed += int(np.count_nonzero(ad))
        # a == 0 always casts to 0, so zeros of b beyond those of a are underflows
        self.underflow += int(np.count_nonzero(b == 0) - np.count_nonzero(a == 0))
        if self.sat_limit is not None:
            saturated = np.abs(a) > self.sat_limit
            n_sat = int(np.count_nonzero(saturated))
            if n_sat:
                self.overflow += n_sat
                keep = ~saturated
                a, ad = a[keep], ad[keep]
                if not a.size:
                    return
                m = float(ad.max())
        self._accumulate(a, ad, m)

    def _accumulate(self, a: np.ndarray, ad: np.ndarray, m: float) -> None:
        self.count += a.size
        self.sum_abs += float(ad.sum())
        self.max_abs = max(self.max_abs, m)
        if m > 0:
            rel = ad / np.abs(a)  # 0/0 (exact zeros) is NaN, which fmax ignores
            r = float(np.fmax.reduce(rel, initial=0.0))
            self.max_rel = max(self.max_rel, r)
        # the typical error: over non-zero values that did not underflow (a ratio of exactly 1)
        with np.errstate(all="ignore"):
            rel = ad / np.abs(a)
        typical = rel[(a != 0) & (rel != 1.0)]
        self.sum_rel += float(np.sum(typical))
        self.sum_sq_rel += float(np.sum(typical * typical))
        self.count_rel += typical.size

    def result(self) -> ErrorStats:
        unmeasured = self.count == 0 and self.overflow > 0
        return ErrorStats(
            max_abs_err=None if unmeasured else self.max_abs,
            mean_abs_err=None if unmeasured else (self.sum_abs / self.count if self.count else 0.0),
            max_rel_err=None if unmeasured else self.max_rel,
            mean_rel_err=self._typical(self.sum_rel, unmeasured),
            rms_rel_err=self._typical(self.sum_sq_rel, unmeasured, math.sqrt),
            overflow=self.overflow,
            underflow=self.underflow,
            nan=self.nan,
            lossless=self.changed == 0 and self.overflow == 0,
        )

    def _typical(self, total: float, unmeasured: bool, then=float) -> float | None:
        if self.count_rel:
            return then(total / self.count_rel)
        return None if unmeasured or self.underflow else 0.0


def _values(x: np.ndarray, dtype: DType) -> np.ndarray:
    """Float64 values (NaN payloads do not matter here, so numpy's own F16 cast will do)."""
    if dtype.name == "F64":
        return x
    if dtype.name in ("F32", "F16"):
        return x.astype(np.float64)
    return cast_array(x, dtype, _F64)


def _count_nan(values: np.ndarray, dtype: DType) -> int:
    if dtype.name in ("F64", "F32", "F16"):
        return int(np.count_nonzero(np.isnan(values)))
    return int(np.count_nonzero(np.isnan(cast_array(values, dtype, DTYPES["F32"]))))


def assert_same_stats(got, ref, rel_tol: float = 4e-16, rms_tol: float = 1e-5) -> None:
    """Maxima and counts bit for bit; the mean within ``rel_tol`` (summation order differs), the
    typical relative errors within ``rms_tol`` (summed in float32 per block)."""
    assert (got.max_abs_err, got.max_rel_err) == (ref.max_abs_err, ref.max_rel_err)
    assert (got.overflow, got.underflow, got.nan, got.lossless) == (
        ref.overflow,
        ref.underflow,
        ref.nan,
        ref.lossless,
    )
    for key in ("mean_rel_err", "rms_rel_err"):
        mine, theirs = getattr(got, key), getattr(ref, key)
        if theirs is None or theirs == 0:
            assert mine == theirs, key
        else:
            assert math.isclose(mine, theirs, rel_tol=rms_tol, abs_tol=0), key
    if ref.mean_abs_err is None:
        assert got.mean_abs_err is None
    else:
        assert math.isclose(got.mean_abs_err, ref.mean_abs_err, rel_tol=rel_tol, abs_tol=0)
