"""ErrorFigures: the same figures however the streams are cut, and a value that comes back
NaN or infinite is an infinite error, never 0."""

from __future__ import annotations

import math
from itertools import islice

import numpy as np

from inspector.core.quant.compare import ErrorFigures, SharedReference, aligned


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
    exact = math.sqrt((d**2).sum() / (b.astype(np.float64) ** 2).sum())
    assert math.isclose(results[0][2], exact, rel_tol=1e-7)  # F32 pairwise sums per block


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


def test_blocks_of_tiny_huge_and_nan_values_give_the_same_figures_however_cut() -> None:
    """Blocks whose squares F32 cannot hold are summed in float64, each block on its own, so the
    figures still do not depend on the cut; a weight of values ~1e-30 keeps a true error."""
    rng = np.random.default_rng(3)
    n = 16_384
    b = rng.standard_normal(5 * n + 123).astype(np.float32)
    b[n : 2 * n] *= np.float32(1e-30)  # squares underflow F32
    b[2 * n : 3 * n] *= np.float32(1e25)  # squares overflow F32
    a = (b * (1 + rng.standard_normal(b.size) * 1e-3)).astype(np.float32)
    a[3 * n + 7] = np.nan
    results = []
    for cut in (b.size, n, 5_000, 777, 3 * n + 1):
        f = ErrorFigures()
        for i in range(0, b.size, cut):
            f.add(a[i : i + cut], b[i : i + cut])
        results.append((f.max_abs, f.max_rel, f.err_sq, f.ref_sq, f.rms_rel_err))
    assert all(r == results[0] for r in results)
    tiny = ErrorFigures()
    tiny.add(a[n : 2 * n], b[n : 2 * n])
    d = a[n : 2 * n].astype(np.float64) - b[n : 2 * n].astype(np.float64)
    exact = math.sqrt((d**2).sum() / (b[n : 2 * n].astype(np.float64) ** 2).sum())
    assert 5e-4 < tiny.rel_fro_err < 2e-3
    assert math.isclose(tiny.rel_fro_err, exact, rel_tol=1e-12)  # the float64 way


def test_a_shared_reference_gives_the_figures_each_stream_takes_alone() -> None:
    """The preview measures six schemes against one source block: the source's side of the
    work done once must change no figure, and one made for another place in the stream is
    not used."""
    rng = np.random.default_rng(4)
    b = rng.standard_normal(400_000).astype(np.float32)  # 24 blocks: two runs at once
    b[20_000:36_384] *= np.float32(1e-30)  # a block F32 cannot take: float64 for it alone
    streams = [(b + rng.standard_normal(b.size).astype(np.float32) * s).astype(np.float32)
               for s in (1e-3, 1e-1)]  # fmt: skip
    for cut in (9_000, 16_384, 400_000):
        for a in streams:
            alone, shared, misplaced = ErrorFigures(), ErrorFigures(), ErrorFigures()
            for i in range(0, b.size, cut):
                alone.add(a[i : i + cut], b[i : i + cut])
                ref = SharedReference.of(b[i : i + cut], offset=i)
                shared.add(a[i : i + cut], b[i : i + cut], ref)
                wrong = SharedReference.of(b[i + 1 : i + cut + 1], offset=i + 1)
                misplaced.add(a[i : i + cut], b[i : i + cut], wrong)
            figures = [(f.max_abs, f.max_rel, f.err_sq, f.ref_sq, f.rms_rel_err)
                       for f in (alone, shared, misplaced)]  # fmt: skip
            assert figures[0] == figures[1] == figures[2]


def test_the_largest_difference_is_the_float64_one_where_f32_would_round() -> None:
    """F32 a − b rounds when a is far from b (NVFP4 of an F32 weight can give 2.0000005 times
    it): the largest difference is taken again in float64."""
    rng = np.random.default_rng(6)
    b = rng.standard_normal(40_000).astype(np.float32) * np.float32(0.1)
    a = (b * np.float32(1.01)).astype(np.float32)
    a[12_345], b[12_345] = np.float32(3.0000002), np.float32(-1e-8)  # F32: 3.0000002384
    exact = np.abs(a.astype(np.float64) - b.astype(np.float64)).max()
    assert exact == 3.000000248418579 != float(np.abs(a - b).max())
    for cut in (40_000, 5_000):
        f = ErrorFigures()
        for i in range(0, b.size, cut):
            f.add(a[i : i + cut], b[i : i + cut])
        assert f.max_abs == exact


def test_without_f32_every_figure_is_float64() -> None:
    """diff's plain pairs (a norm beside quantized weights) keep float64: 1 − 3.3e-9 is
    0.9999999967, not F32's 1.0, and a status by --atol depends on it."""
    a = np.ones(20_000, np.float32)
    b = np.full(20_000, 3.3e-9, np.float32)
    plain = ErrorFigures(f32=False)
    plain.add(a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    rel = np.abs(a64 - b64) / np.maximum(np.abs(a64), np.abs(b64))
    assert (plain.max_abs, plain.max_rel) == (0.9999999967, rel.max())
    assert plain.rms_rel_err == math.sqrt(float(np.add.reduce(np.square(rel))) / rel.size)


def test_aligned_pairs_flat_blocks_of_equal_length_however_the_streams_are_cut() -> None:
    """Rows of 2-D chunks are flattened, each block ends where either side's chunk ends, and
    the pairs stop with the streams (taken at most 10 pairs: a loop that never ends fails)."""
    xs = [np.arange(6.0).reshape(2, 3), np.arange(6.0, 10.0)]
    ys = [np.arange(5.0) + 100, (np.arange(5.0, 10.0) + 100).reshape(1, 5)]
    got = list(islice(aligned(iter(xs), iter(ys)), 10))
    assert [(a.tolist(), b.tolist()) for a, b in got] == [
        ([0.0, 1.0, 2.0, 3.0, 4.0], [100.0, 101.0, 102.0, 103.0, 104.0]),
        ([5.0], [105.0]),
        ([6.0, 7.0, 8.0, 9.0], [106.0, 107.0, 108.0, 109.0]),
    ]


def test_a_block_with_nan_and_inf_adds_exact_figures_to_the_blocks_before_it() -> None:
    """Three blocks, each closed on its own: a finite one, one with NaN, ±inf, a zero pair and
    a NaN pair, and one whose only non-finite values are a NaN pair. Every figure of the
    non-finite blocks is exact (a NaN or inf difference counts 2 in the RMS, a 0/0 pair 0, a
    NaN pair is equal) and is added to what came before, with no numpy warning."""
    import warnings

    f, g = ErrorFigures(), ErrorFigures()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for figures in (f, g):
            figures.add(np.array([4.0, 2.0], np.float32), np.array([2.0, 2.0], np.float32))
            figures.close()  # d [2, 0], rel [0.5, 0]
        f.add(np.array([np.nan, np.inf, 1.0, 0.0, np.nan], np.float32),
              np.array([1.0, 2.0, 0.5, 0.0, np.nan], np.float32))  # fmt: skip
        f.close()  # d [inf, inf, 0.5, 0, 0]; rel counted [2, 2, 0.5, 0, 0]
        g.add(np.array([np.nan, 4.0], np.float32), np.array([np.nan, 2.0], np.float32))
        g.close()  # d [0, 2], rel [0, 0.5]
        figures = [(x.max_abs, x.max_rel, x.err_sq, x.ref_sq, x.rms_rel_err) for x in (f, g)]
    assert figures[0] == (math.inf, math.inf, math.inf, 8.0 + 5.25, math.sqrt(8.5 / 7))
    assert figures[1] == (2.0, 0.5, 8.0, 8.0 + 4.0, math.sqrt(0.5 / 4))
