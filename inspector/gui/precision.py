"""Numbers behind the precision plots (numpy only, no Qt): before/after histograms of one tensor.

Runs on a worker thread. Big tensors are sampled with a fixed stride (the same elements from the
original and the saved file), so a 1 GB tensor costs a few MB; the per-tensor maxima in the cast
report stay exact because the cast engine computes them over every element.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inspector.core.stats import bin_edges

MAX_SAMPLES = 2_000_000


@dataclass(frozen=True)
class BeforeAfter:
    name: str
    edges: np.ndarray  # float64, bins + 1
    before: np.ndarray  # counts, original values
    after: np.ndarray  # counts, saved values
    err_edges: np.ndarray  # log10 of relative error, bins + 1
    err_counts: np.ndarray
    n: int  # elements looked at
    numel: int
    exact: int  # elements whose saved value equals the original
    sampled: bool
    before_nonfinite: dict[str, int]  # "+inf", "-inf", "nan": counts among the values looked at
    after_nonfinite: dict[str, int]
    overflowed: int  # finite before, ±inf after (out of the error histogram)

    @property
    def stride(self) -> int:
        return max(1, self.numel // max(1, self.n))


def _flat64(a: np.ndarray, step: int) -> np.ndarray:
    flat = a.reshape(-1)
    if step > 1:
        flat = flat[::step]
    if flat.dtype.kind == "c":
        flat = np.abs(flat)
    return flat.astype(np.float64)


def sample_step(numel: int, max_samples: int = MAX_SAMPLES) -> int:
    return max(1, -(-numel // max_samples))


def before_after(
    name: str, before: np.ndarray, after: np.ndarray, bins: int = 64, max_samples: int = MAX_SAMPLES
) -> BeforeAfter:
    """Histograms of ``before`` and ``after`` on shared edges, and of log10 relative error."""
    numel = int(before.size)
    step = sample_step(numel, max_samples)
    a = _flat64(before, step)
    b = _flat64(after, step)
    fa, fb = np.isfinite(a), np.isfinite(b)
    both = np.concatenate([a[fa], b[fb]])
    if both.size:
        lo, hi = float(both.min()), float(both.max())
    else:
        lo, hi = 0.0, 1.0
    edges = bin_edges(lo, hi, bins)  # the core's edges: never forms hi - lo, so ±1e308 draws
    cb, _ = np.histogram(a[fa], bins=edges)
    ca, _ = np.histogram(b[fb], bins=edges)
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = fa & fb & (a != 0)
        rel = np.abs(b[ok] - a[ok]) / np.abs(a[ok])
    exact = int(np.count_nonzero(a == b) + np.count_nonzero(np.isnan(a) & np.isnan(b)))
    nz = rel[rel > 0]
    if nz.size:
        lg = np.log10(nz)
        elo, ehi = float(np.floor(lg.min())), float(np.ceil(lg.max()))
        if elo == ehi:
            elo, ehi = elo - 1, ehi + 1
        err_edges = np.linspace(elo, ehi, bins + 1)
        err_counts, _ = np.histogram(lg, bins=err_edges)
    else:  # nothing to histogram: every value exact (or overflowed); the plot says which
        err_edges = np.zeros(0)
        err_counts = np.zeros(0, dtype=np.int64)
    return BeforeAfter(
        name,
        edges,
        cb,
        ca,
        err_edges,
        err_counts,
        int(a.size),
        numel,
        exact,
        step > 1,
        nonfinite_counts(a),
        nonfinite_counts(b),
        int(np.count_nonzero(fa & ~fb & ~np.isnan(b))),
    )


def nonfinite_counts(x: np.ndarray) -> dict[str, int]:
    """How many values are +inf, -inf and NaN (only the non-zero ones are listed)."""
    counts = {
        "+inf": int(np.count_nonzero(x == np.inf)),
        "-inf": int(np.count_nonzero(x == -np.inf)),
        "nan": int(np.count_nonzero(np.isnan(x))),
    }
    return {k: v for k, v in counts.items() if v}


def describe_nonfinite(counts: dict[str, int]) -> str:
    """``120 −inf, 3 NaN``: values a histogram of finite values cannot show."""
    names = {"+inf": "+inf", "-inf": "−inf", "nan": "NaN"}
    return ", ".join(f"{n:,} {names[k]}" for k, n in counts.items())
