"""ErrorFigures against figures computed in float64 from their definitions, on each path the
measuring takes: float64 blocks (``f32=False``, as ``diff`` measures plain pairs), F32 blocks
(the preview's hot path) and the blocks F32 cannot hold; with a shared reference; and with no
numpy warning on a user's terminal wherever a value is extreme."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from inspector.core.quant.compare import ErrorFigures, SharedReference

BLOCK = 16_384  # the figures' summing block (compare._SUM_BLOCK)


def _definition(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float, float, float]:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    d = np.abs(a64 - b64)
    scale = np.maximum(np.abs(a64), np.abs(b64))
    rel = np.divide(d, scale, out=np.zeros_like(d), where=scale > 0)  # a pair of zeros: 0
    return (float(d.max()), float(rel.max()), float((d**2).sum()), float((b64**2).sum()),
            math.sqrt(float((rel**2).sum()) / rel.size))  # fmt: skip


def _figures(f: ErrorFigures) -> tuple[float, float, float, float, float]:
    return f.max_abs, f.max_rel, f.err_sq, f.ref_sq, f.rms_rel_err


def _pair(seed: int, n: int = 3 * BLOCK + 5_000) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    b = rng.standard_normal(n).astype(np.float32)
    a = (b + rng.standard_normal(n).astype(np.float32) * 1e-2).astype(np.float32)
    a[::97] = b[::97] = 0.0  # pairs of zeros in every block
    return a, b


@pytest.mark.parametrize("f32", [False, True])
def test_every_figure_of_several_blocks_is_its_definition(f32):
    a, b = _pair(11)
    f = ErrorFigures(f32=f32)
    for i in range(0, a.size, 10_000):
        f.add(a[i : i + 10_000], b[i : i + 10_000])
    want = _definition(a, b)
    assert f.max_abs == want[0]  # the largest difference is always taken in float64
    rel_tol = 1e-12 if not f32 else 1e-6  # F32 pairwise sums per block
    for got, expected in zip(_figures(f)[1:], want[1:], strict=True):
        assert math.isclose(got, expected, rel_tol=rel_tol), (got, expected)


def test_a_reference_too_small_for_f32_squares_is_measured_in_float64():
    """b ~ 1e-30 (its squares are 0 in F32) against a ~ 1: the differences alone are in F32's
    range, and the reference's sum of squares must still be 1e-60's, not 0 (an infinite
    relative error)."""
    rng = np.random.default_rng(12)
    b = (rng.standard_normal(BLOCK) * 1e-30).astype(np.float32)
    a = rng.standard_normal(BLOCK).astype(np.float32)
    f = ErrorFigures()
    f.add(a, b)
    want = _definition(a, b)
    assert f.ref_sq > 0 and math.isclose(f.ref_sq, want[3], rel_tol=1e-12)
    assert math.isclose(f.rel_fro_err, math.sqrt(want[2] / want[3]), rel_tol=1e-12)


def test_a_largest_difference_of_exactly_one_is_found():
    a, b = np.ones(BLOCK, np.float32), np.ones(BLOCK, np.float32)
    a[5] = 2.0
    f = ErrorFigures()
    f.add(a, b)
    assert (f.max_abs, f.max_rel, f.err_sq) == (1.0, 0.5, 1.0)


def test_a_difference_past_f32_prints_no_warning_and_is_the_float64_one():
    a, b = np.ones(BLOCK, np.float32), np.ones(BLOCK, np.float32)
    a[3], b[3] = np.float32(3e38), np.float32(-3e38)  # a - b overflows F32
    f = ErrorFigures()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f.add(a, b)
        f.close()
    assert f.max_abs == float(np.float32(3e38)) * 2


def test_a_shared_reference_of_values_f32_cannot_square_prints_no_warning():
    b = np.full(2 * BLOCK, 1e30, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SharedReference.of(b, offset=0)


def test_a_shared_reference_of_float64_values_changes_no_figure():
    """A float64 reference is not exact in F32: its shared side is not made, and the stream
    measured with it gives the figures it gives alone."""
    a, b = _pair(13)
    a64, b64 = a.astype(np.float64) * (1 + 1e-12), b.astype(np.float64)
    alone, shared = ErrorFigures(f32=False), ErrorFigures(f32=False)
    alone.add(a64, b64)
    shared.add(a64, b64, SharedReference.of(b64, offset=0))
    assert _figures(shared) == _figures(alone)


def test_a_shared_reference_of_rows_at_any_offset_changes_no_figure():
    """The preview makes it from a block of rows (2-D) that starts anywhere in the tensor."""
    a, b = _pair(14, 24 * BLOCK)
    a2, b2 = a.reshape(-1, 1_024), b.reshape(-1, 1_024)  # 384 rows
    # 20 or 50 rows a chunk: blocks cut anywhere, whole blocks after a carry of any length;
    # 5 then 379 rows: more than one run of blocks after a carry
    for cuts in ([20] * 20, [50] * 8, [5, 379]):
        alone, shared, r = ErrorFigures(), ErrorFigures(), 0
        for rows in cuts:
            ref = SharedReference.of(b2[r : r + rows], r * 1_024)
            alone.add(a2[r : r + rows], b2[r : r + rows])
            shared.add(a2[r : r + rows], b2[r : r + rows], ref)
            r += rows
        assert _figures(shared) == _figures(alone)
