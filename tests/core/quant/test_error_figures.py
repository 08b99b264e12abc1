"""ErrorFigures: the same figures however the streams are cut, and a value that comes back
NaN or infinite is an infinite error, never 0."""

from __future__ import annotations

import math

import numpy as np

from inspector.core.quant.compare import ErrorFigures


def test_figures_do_not_depend_on_how_the_streams_are_cut() -> None:
    rng = np.random.default_rng(0)
    b = rng.standard_normal(100_003).astype(np.float32)
    a = (b + rng.standard_normal(b.size).astype(np.float32) * 1e-3).astype(np.float32)
    results = []
    for cut in (100_003, 16_384, 5_000, 777):
        f = ErrorFigures()
        for i in range(0, b.size, cut):
            f.add(a[i : i + cut], b[i : i + cut])
        results.append((f.max_abs, f.max_rel, f.rel_fro_err, f.sqnr_db, f.rms_rel_err))
    assert all(r == results[0] for r in results)
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    assert results[0][0] == d.max()
    assert math.isclose(results[0][2], math.sqrt((d**2).sum() / (b.astype(np.float64) ** 2).sum()))


def test_a_value_that_comes_back_nan_is_an_infinite_relative_error() -> None:
    f = ErrorFigures()
    f.add(np.array([np.nan, 1.0], np.float32), np.array([0.5, 1.0], np.float32))
    assert f.max_abs == math.inf and f.max_rel == math.inf
    h = ErrorFigures()
    h.add(np.array([np.inf, 1.0], np.float32), np.array([2.0, 1.0], np.float32))
    assert h.max_rel == math.inf
    g = ErrorFigures()
    g.add(np.array([np.nan, 1.0], np.float32), np.array([np.nan, 1.0], np.float32))
    assert (g.max_abs, g.max_rel, g.err_sq) == (0.0, 0.0, 0.0)  # NaN against NaN is equal
