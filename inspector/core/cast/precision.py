"""What a cast loses, measured chunk by chunk while casting (no second pass over the data).

The arithmetic is exact for every cast target. A source of 32 bits or fewer is measured in float32:
the rounding error ``cast(a) - a`` of a narrowing cast is exactly representable there (the two are
within a factor of 2, or the result is 0; overflowed values are left out anyway), so the maximum
error is the float64 one bit for bit, sums are accumulated in float64, and the largest relative
error is found in float32 and then recomputed in float64 for the few candidates near it (float32
division is within 2^-24 of the true ratio). Half the bytes of the float64 version move through
memory. F64 sources are measured in float64. Definitions (the ``cast --report`` JSON uses them):

* ``max_abs_err`` / ``mean_abs_err`` / ``max_rel_err`` (|err| / |orig| over orig ≠ 0): over values
  that are finite before and after and did not overflow. One rule for every target: a value that
  overflowed (to ±inf, or saturated to ±448 by F8_E4M3) is counted in ``overflow`` and left out of
  the error figures, so they stay meaningful. When no value is left to measure (every value
  overflowed) the three are ``None`` (JSON null), never 0.
* ``mean_rel_err`` and ``rms_rel_err``: the typical relative error beside the largest one, the
  mean and the root mean square of |err| / |orig| over the values ``max_rel_err`` measures, less
  the underflows (non-zero values that became 0, each an error of exactly 1, counted in
  ``underflow``). A randn × 0.02 F32 tensor cast to F16 reads a ``max_rel_err`` of 1 as soon as
  one of its values underflows, while its values typically lost ~2e-4. Both are exact and
  stream (per block a sum and a count, merged in order: no second pass, no histogram), which a
  median would not. Values that land among the target's subnormals still count (they did lose
  that precision; for F8 targets most small weights are subnormal). The mean is the typical
  figure the window shows: the RMS weighs those few subnormal values quadratically, so one value
  in 500k off by half of itself lifts a tensor's RMS from 2e-4 to ~1e-3, and 16 randn × 0.02
  tensors of 500k values read a mean of 1.80–1.84e-4 but an RMS of 3.6e-4 to 1.9e-3. Both are
  ``None`` when nothing is left to measure (every value overflowed or underflowed), 0 when
  nothing changed.
* ``overflow``: finite values that became ±inf, plus values torch saturated to ±max (F8_E4M3 has no
  inf: it clamps |x| beyond the rounding range of 448, and ±inf, to ±448).
* ``underflow``: non-zero values that became zero.
* ``nan``: NaN values in the output. Casting with torch semantics never creates a NaN (E4M3
  saturates instead), so these are the NaNs the tensor already had.
* ``lossless``: every non-NaN value is unchanged (so it round-trips exactly); NaNs stay NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..dtypes import DTYPES, DType
from .kernels import FORMATS, cast_array, is_exact_cast, saturates
from .scratch import scratch

_F64 = DTYPES["F64"]
_F32 = DTYPES["F32"]
_CANDIDATE = 1 - 2.0**-20  # float32 ratios this close to the largest may be the true largest
BLOCK = 1 << 16  # elements per pass: the fused kernel's temporaries (4 × 256 KiB) stay in L2


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


class ErrorAccumulator:
    """Feed it (original chunk, cast chunk) pairs in order; :meth:`result` gives the totals."""

    def __init__(self, src: DType, dst: DType) -> None:
        self.src, self.dst = src, dst
        self.exact = is_exact_cast(src, dst)
        self.work = _F64 if src.bits > 32 else _F32  # where a - cast(a) is exact
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
        # Σ |err| / |orig| and its squares over non-zero values that did not underflow, and how
        # many values they ran over
        self.sum_rel = 0.0
        self.sum_sq_rel = 0.0
        self.count_rel = 0
        self.overflow = 0
        self.underflow = 0
        self.nan = 0
        self.changed = False  # some non-NaN value changed (lossless needs none)

    def update(self, orig: np.ndarray, cast: np.ndarray) -> None:
        orig, cast = orig.reshape(-1), cast.reshape(-1)
        if self.exact:  # widening: every value is kept; only NaNs need counting
            self.nan += _count_nan(orig, self.src)
            return
        with np.errstate(all="ignore"):
            for i in range(0, orig.size, BLOCK):
                self._block(orig[i : i + BLOCK], cast[i : i + BLOCK])

    def _block(self, orig: np.ndarray, cast: np.ndarray) -> None:
        a = np.abs(_values(orig, self.src, self.work))
        self.measure(a, np.abs(_values(cast, self.dst, self.work)))

    def measure(self, a: np.ndarray, b: np.ndarray, a_max: float | None = None) -> None:
        """One cache-sized block of the magnitudes of original and cast values, in ``self.work``.

        A cast keeps the sign, so ``||b| - |a||`` is the error. A cast kernel that already holds
        the rounded values (``narrow_float``) hands them in directly, with ``a_max`` (the largest
        of ``a``, NaN beyond inf) when it has it.
        """
        ad = np.subtract(b, a, out=scratch("measure.ad", a.size, a.dtype))
        np.abs(ad, out=ad)
        m = float(ad.max())
        if math.isfinite(m):  # common case: every value finite before and after
            self._finite(a, ad, m, a_max)
            return
        nan_a = np.isnan(a)
        self.nan += int(np.count_nonzero(np.isnan(b)))
        fin_a = np.isfinite(a)
        fin_b = np.isfinite(b)
        both = fin_a & fin_b
        # inf → same inf is kept; finite → inf, inf → ±max (saturation) are overflow
        self.overflow += int(np.count_nonzero((fin_a & ~fin_b) | (~fin_a & ~nan_a & fin_b)))
        if self.sat_limit is not None:
            saturated = both & (a > self.sat_limit)
            self.overflow += int(np.count_nonzero(saturated))
            both &= ~saturated
        self.underflow += int(np.count_nonzero((b == 0) & (a != 0) & ~nan_a))
        self.changed = self.changed or bool(np.any((a != b) & ~nan_a))
        if both.any():
            a, b, ad = a[both], b[both], ad[both]
            self._accumulate(a, ad, float(ad.max()), count_underflow=False)

    def _finite(self, a: np.ndarray, ad: np.ndarray, m: float, a_max: float | None) -> None:
        if m == 0.0:
            self.count += a.size
            self.count_rel += _count_nonzero_bits(a)
            return
        self.changed = True  # m > 0
        if (
            self.sat_limit is not None
            and (a_max if a_max is not None else a.max()) > self.sat_limit
        ):
            saturated = a > self.sat_limit
            n_sat = int(np.count_nonzero(saturated))
            if n_sat:
                self.overflow += n_sat
                keep = ~saturated
                a, ad = a[keep], ad[keep]
                if not a.size:
                    return
                m = float(ad.max())
        self._accumulate(a, ad, m)

    def _accumulate(
        self, a: np.ndarray, ad: np.ndarray, m: float, count_underflow: bool = True
    ) -> None:
        self.count += a.size
        self.sum_abs += float(np.add.reduce(ad, dtype=np.float64))
        self.max_abs = max(self.max_abs, m)
        nonzero = _count_nonzero_bits(a)
        if m > 0:
            rel = np.divide(ad, a, out=scratch("measure.rel", a.size, a.dtype))
            if nonzero < a.size:  # 0/0 (exact zeros: their cast is 0 too) is NaN: 0 here
                np.fmax(rel, 0, out=rel)
            r = float(rel.max())
            # |cast(a) - a| == |a| only where a non-zero value became 0 (rounding never doubles
            # a value, so the ratio is at most 1, and 1 only there): the underflows, counted only
            # in blocks that have one, and left out of the typical error
            if r == 1.0:
                ones = rel == 1.0
                n_under = int(np.count_nonzero(ones))
                if count_underflow:
                    self.underflow += n_under
                nonzero -= n_under
                rel[ones] = 0.0
            if r < 1.0 and rel.dtype != np.float64 and r > 0 and r >= self.max_rel * _CANDIDATE:
                # the float64 ratio of the near-largest ones (a float32 ratio is within 2**-24 of
                # it); a block that cannot beat the maximum so far is skipped
                near = rel >= r * _CANDIDATE
                a64, ad64 = a[near].astype(np.float64), ad[near].astype(np.float64)
                r = float(np.fmax.reduce(ad64 / a64, initial=0.0))
            # summed pairwise in the work dtype (float32: within ~1e-6 of the float64 sum, for
            # a third of its time), the blocks' sums in float64
            self.sum_rel += float(np.add.reduce(rel))
            self.sum_sq_rel += float(np.add.reduce(np.square(rel, out=rel)))
            self.max_rel = max(self.max_rel, r)
        self.count_rel += nonzero

    def fresh(self) -> ErrorAccumulator:
        """An empty accumulator for the same cast: one per chunk when chunks run in parallel."""
        return ErrorAccumulator(self.src, self.dst)

    def merge(self, part: ErrorAccumulator) -> None:
        """Add the totals of a chunk measured by :meth:`fresh`'s accumulator (in chunk order, so
        the float64 sum is the same on every run)."""
        self.max_abs = max(self.max_abs, part.max_abs)
        self.max_rel = max(self.max_rel, part.max_rel)
        self.sum_abs += part.sum_abs
        self.count += part.count
        self.sum_rel += part.sum_rel
        self.sum_sq_rel += part.sum_sq_rel
        self.count_rel += part.count_rel
        self.overflow += part.overflow
        self.underflow += part.underflow
        self.nan += part.nan
        self.changed = self.changed or part.changed

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
            lossless=not self.changed and self.overflow == 0,
        )

    def _typical(
        self, total: float, unmeasured: bool, then: Callable[[float], float] = float
    ) -> float | None:
        if self.count_rel:
            return then(total / self.count_rel)
        return None if unmeasured or self.underflow else 0.0


def _values(x: np.ndarray, dtype: DType, work: DType) -> np.ndarray:
    """The values in ``work`` (F32 or F64), exactly (NaN payloads do not matter here, so numpy's
    own F16 cast will do)."""
    if dtype.name == work.name:
        return x
    if dtype.name in ("F64", "F32", "F16"):
        return x.astype(work.numpy)
    return cast_array(x, dtype, work)


def _count_nonzero_bits(magnitudes: np.ndarray) -> int:
    """Non-zero magnitudes (never -0.0), counted on their bits: numpy's float count is 6× slower."""
    return int(np.count_nonzero(magnitudes.view(f"u{magnitudes.itemsize}")))


def _count_nan(values: np.ndarray, dtype: DType) -> int:
    if dtype.name in ("F64", "F32", "F16"):
        return int(np.count_nonzero(np.isnan(values)))
    return int(np.count_nonzero(np.isnan(cast_array(values, dtype, DTYPES["F32"]))))
