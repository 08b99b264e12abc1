"""The report measured in float32 (for sources of 32 bits or fewer) equals the float64 reference:
maxima and counts bit for bit, the mean within a few float64 ulps (summation order differs)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.cast.kernels import cast_array
from inspector.core.cast.precision import ErrorAccumulator
from inspector.core.dtypes import DTYPES

from .precision_reference import Float64ErrorAccumulator, assert_same_stats

PAIRS = [
    ("F32", "F16"), ("F32", "BF16"), ("F32", "F8_E4M3"), ("F32", "F8_E5M2"),
    ("F16", "BF16"), ("F16", "F8_E4M3"), ("F16", "F8_E5M2"), ("BF16", "F16"),
    ("BF16", "F8_E4M3"), ("F64", "F32"), ("F64", "F16"), ("F64", "BF16"),
]  # fmt: skip

SPECIAL = np.array(
    [0.0, -0.0, 1e-45, -1e-45, 1e-40, 6e-8, 3e-8, 2.9e-8, 5.96e-8, 1e-10, 1.0001, 65504.0,
     65520.0, 65519.99, 1e5, 3.4e38, -3.4e38, 448.0, 463.9, 464.0, 464.1, 470.0, 1e6,
     57344.0, 61440.0, np.inf, -np.inf, np.nan, 1.5, -2.75, 0.1, 1 / 3],
)  # fmt: skip


def _both(src: str, dst: str, values: np.ndarray, chunk: int = 7) -> tuple:
    s, d = DTYPES[src], DTYPES[dst]
    with np.errstate(all="ignore"):
        x = cast_array(values.astype(np.float64), DTYPES["F64"], s)
    c = cast_array(x, s, d)
    fast, ref = ErrorAccumulator(s, d), Float64ErrorAccumulator(s, d)
    for i in range(0, x.size, chunk):
        fast.update(x[i : i + chunk], c[i : i + chunk])
        ref.update(x[i : i + chunk], c[i : i + chunk])
    return fast.result(), ref.result()


@pytest.mark.parametrize("src, dst", PAIRS)
def test_special_values(src, dst):
    assert_same_stats(*_both(src, dst, SPECIAL))
    assert_same_stats(*_both(src, dst, SPECIAL[np.isfinite(SPECIAL)]))


@pytest.mark.parametrize("src, dst", PAIRS)
def test_random_blocks_larger_than_the_cache_block(src, dst):
    rng = np.random.default_rng(7)
    values = rng.standard_normal(200_000) * 10.0 ** rng.integers(-12, 6, 200_000)
    assert_same_stats(*_both(src, dst, values, chunk=70_001))


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(PAIRS),
    st.lists(
        st.floats(allow_nan=True, allow_infinity=True, width=64) | st.sampled_from(list(SPECIAL)),
        min_size=1,
        max_size=40,
    ),
)
def test_any_values(pair, values):
    assert_same_stats(*_both(*pair, np.array(values, dtype=np.float64)))


@pytest.mark.parametrize("src, dst", PAIRS)
def test_measuring_special_values_prints_no_numpy_warning(src, dst):
    """0/0, inf - inf and ratios past the largest float are expected while measuring: numpy must
    not print a RuntimeWarning on the terminal of a person running ``cast``."""
    s, d = DTYPES[src], DTYPES[dst]
    with np.errstate(all="ignore"):
        x = cast_array(SPECIAL, DTYPES["F64"], s)
        c = cast_array(x, s, d)
    acc = ErrorAccumulator(s, d)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        acc.update(x, c)
    assert acc.result().nan == 1


def test_nans_of_a_widening_cast_are_counted_over_every_chunk():
    acc = ErrorAccumulator(DTYPES["F16"], DTYPES["F32"])  # exact: only NaNs are counted
    chunk = np.array([np.nan, 1.0, np.nan], np.float16)
    for _ in range(3):
        acc.update(chunk, chunk.astype(np.float32))
    stats = acc.result()
    assert (stats.nan, stats.lossless, stats.max_abs_err) == (6, True, 0.0)
