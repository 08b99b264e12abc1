"""cast_array is bit-identical to torch.Tensor.to for all 30 pairs of the cast targets.

8- and 16-bit sources are checked on every bit pattern; F32/F64 sources on every F32 value next to
a rounding boundary of each narrow target, special values, and large random bit-pattern samples.
"""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
import torch

from inspector.core.cast.kernels import FORMATS, cast_array, is_exact_cast, saturates
from inspector.core.dtypes import CAST_TARGETS, DTYPES

from .. import torch_dtypes

TORCH = torch_dtypes.FLOAT
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
TORCH_INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
PAIRS = [(a, b) for a, b in itertools.permutations(CAST_TARGETS, 2)]
# torch's scalar tail loop writes these NaNs differently from its vector loop (0x7FFFFFFF / 0x7FC0
# instead of payload-keeping / 0xFFFF), so for NaNs only, either answer is torch's.
TORCH_NAN_UNSTABLE = {("F16", "F32"), ("F64", "BF16")}
# building inputs with numpy casts overflows on purpose
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def size(name: str) -> int:
    return DTYPES[name].numpy.itemsize


def torch_bits(values: np.ndarray, src: str, dst: str) -> np.ndarray:
    """Bits of ``torch.Tensor.to(dst)`` applied to the exact bits of ``values``."""
    n = size(src)
    t = torch.from_numpy(
        np.ascontiguousarray(values).view(UINT[n]).view(f"i{n}")
        if n > 1
        else np.ascontiguousarray(values).view(np.uint8)
    )
    out = t.view(TORCH[src]).to(TORCH[dst])
    m = size(dst)
    return out.view(TORCH_INT[m]).numpy().view(UINT[m])


def our_bits(values: np.ndarray, src: str, dst: str) -> np.ndarray:
    out = cast_array(values, DTYPES[src], DTYPES[dst])
    assert out.dtype == DTYPES[dst].numpy
    assert out.shape == values.shape
    return out.view(UINT[size(dst)])


def assert_same_bits(values: np.ndarray, src: str, dst: str) -> None:
    ours, ref = our_bits(values, src, dst), torch_bits(values, src, dst)
    bad = ours != ref
    if (src, dst) in TORCH_NAN_UNSTABLE:
        bad &= ~np.isnan(ref.view(DTYPES[dst].numpy).astype(np.float32))
    if bad.any():
        idx = np.flatnonzero(bad)[:5]
        src_bits = values.view(UINT[size(src)])[idx]
        pytest.fail(
            f"{src}->{dst}: {bad.sum()} of {bad.size} differ, e.g. source "
            f"{[hex(b) for b in src_bits]} ours {[hex(b) for b in ours[idx]]} "
            f"torch {[hex(b) for b in ref[idx]]}"
        )


def all_patterns(src: str) -> np.ndarray:
    n = size(src)
    return np.arange(1 << (8 * n), dtype=UINT[n]).view(DTYPES[src].numpy)


# -- exhaustive: every bit pattern of 8- and 16-bit sources -----------------------------------


@pytest.mark.parametrize(("src", "dst"), [p for p in PAIRS if size(p[0]) <= 2])
def test_every_bit_pattern_of_small_sources(src, dst):
    assert_same_bits(all_patterns(src), src, dst)


# -- F32 / F64 sources -------------------------------------------------------------------------


def boundary_values(dst: str) -> np.ndarray:
    """F64 values at, between and just around every pair of neighbouring ``dst`` values."""
    if size(dst) <= 2:
        v = all_patterns(dst).astype(np.float64)
    else:  # F32 / F64 targets: powers of two and their neighbourhoods are where rounding turns
        e = np.arange(-1080, 1030, dtype=np.float64)
        v = np.concatenate([2.0**e, 1.5 * 2.0**e, 1.75 * 2.0**e])
    v = np.unique(v[np.isfinite(v)])
    mids = (v[:-1] + v[1:]) / 2
    return np.concatenate([v, mids, -mids])


def specials() -> np.ndarray:
    f32 = np.finfo(np.float32)
    vals = [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        1.0,
        -1.0,
        float(f32.max),
        float(f32.smallest_subnormal),
        float(f32.smallest_normal),
        65504.0,
        65519.99,
        65520.0,
        65536.0,
        448.0,
        456.0,
        464.0,
        464.01,
        480.0,
        1e30,
        57344.0,
        61439.0,
        61440.0,
        2.0**-24,
        2.0**-25,
        2.0**-26,
        1.5 * 2.0**-25,
        2.0**-9,
        2.0**-10,
        1.5 * 2.0**-10,
        2.0**-16,
        2.0**-17,
        2.0**-133,
        2.0**-134,
        1 + 2**-8 + 2**-30,
        1 + 2**-11 + 2**-40,
        1e300,
        1e-300,
        5e-324,
    ]
    v = np.array(vals, dtype=np.float64)
    return np.concatenate([v, -v])


def nan_patterns(src: str, n: int = 4000) -> np.ndarray:
    """Quiet and signalling NaNs of both signs with random payloads (and the extreme payloads)."""
    rng = np.random.default_rng(7)
    bits = 8 * size(src)
    ebits = {32: 8, 64: 11}[bits]
    mbits = bits - 1 - ebits
    u = UINT[size(src)]
    pay = rng.integers(1, 1 << mbits, n, dtype=u)
    pay[:4] = [1, (1 << mbits) - 1, 1 << (mbits - 1), (1 << (mbits - 1)) - 1]
    sign = (rng.integers(0, 2, n).astype(u)) << u(bits - 1)
    exp = u((1 << ebits) - 1) << u(mbits)
    return (sign | exp | pay).view(DTYPES[src].numpy)


def f32_neighbours(v64: np.ndarray, steps: int = 2) -> np.ndarray:
    """Each value rounded to F32 and its F32 neighbours ``steps`` ulps away on both sides."""
    with np.errstate(over="ignore"):
        w = v64.astype(np.float32).view(np.uint32).astype(np.int64)
    out = [w + k for k in range(-steps, steps + 1)]
    return np.concatenate(out).clip(0, 0xFFFFFFFF).astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("dst", [d for d in CAST_TARGETS if d != "F32"])
def test_f32_source(dst):
    rng = np.random.default_rng(1)
    edges = f32_neighbours(np.concatenate([boundary_values(dst), specials()]))
    rand_bits = rng.integers(0, 1 << 32, 1_000_000, dtype=np.uint32).view(np.float32)
    normal = (rng.standard_normal(200_000) * rng.choice([1e-6, 1e-3, 1, 100, 1e4], 200_000)).astype(
        np.float32
    )
    values = np.concatenate([edges, rand_bits, normal, nan_patterns("F32")])
    assert_same_bits(values, "F32", dst)


@pytest.mark.parametrize("dst", [d for d in CAST_TARGETS if d != "F64"])
def test_f64_source(dst):
    rng = np.random.default_rng(2)
    b = np.concatenate([boundary_values(dst), specials()])
    # tiny nudges below F32 precision are where F32-first double rounding shows
    nudged = np.concatenate([b, b * (1 + 2.0**-30), b * (1 - 2.0**-30), b * (1 + 2.0**-52)])
    f32_edges = f32_neighbours(b).astype(np.float64)
    rand_bits = rng.integers(0, 1 << 64, 1_000_000, dtype=np.uint64).view(np.float64)
    normal = rng.standard_normal(200_000) * rng.choice([1e-6, 1e-3, 1, 100, 1e4], 200_000)
    values = np.concatenate([nudged, f32_edges, rand_bits, normal, nan_patterns("F64")])
    assert_same_bits(values, "F64", dst)


# -- named traps ---------------------------------------------------------------------------


def test_f64_to_bf16_rounds_through_f32():
    x = np.array([1 + 2**-8 + 2**-30])
    out = cast_array(x, DTYPES["F64"], DTYPES["BF16"])
    assert float(out[0]) == 1.0  # single rounding would give 1.0078125
    assert float(x.astype(ml_dtypes.bfloat16)[0]) == 1.0078125


@pytest.mark.parametrize("src", ["F64", "F32", "F16", "BF16", "F8_E5M2"])
def test_e4m3_saturates_out_of_range_and_inf(src):
    with np.errstate(over="ignore"):
        x = np.array([np.inf, -np.inf, 1e4, -1e4, 464.5, -500], dtype=np.float64).astype(
            DTYPES[src].numpy
        )
    out = cast_array(x, DTYPES[src], DTYPES["F8_E4M3"]).astype(np.float64)
    assert out.tolist() == [448, -448, 448, -448, 448, -448]
    assert saturates(DTYPES["F8_E4M3"])


def test_overflow_to_inf_for_f16_bf16_e5m2():
    x = np.array([1e6, -1e6, 65520.0, 3.4e38], dtype=np.float32)
    assert np.isinf(cast_array(x, DTYPES["F32"], DTYPES["F16"]).astype(np.float32)).all()
    assert np.isinf(cast_array(x * 1e38, DTYPES["F32"], DTYPES["BF16"]).astype(np.float32)).all()
    assert np.isinf(cast_array(x, DTYPES["F32"], DTYPES["F8_E5M2"]).astype(np.float32)).all()


def test_nan_encodings_follow_torch():
    nan_f32 = np.array([np.nan, -np.nan], dtype=np.float32)
    assert cast_array(nan_f32, DTYPES["F32"], DTYPES["BF16"]).view(np.uint16).tolist() == [
        0xFFFF,
        0xFFFF,
    ]
    assert cast_array(nan_f32, DTYPES["F32"], DTYPES["F8_E4M3"]).view(np.uint8).tolist() == [
        0x7F,
        0xFF,
    ]
    nan_f16 = np.array([np.nan, -np.nan], dtype=np.float16)
    assert cast_array(nan_f16, DTYPES["F16"], DTYPES["BF16"]).view(np.uint16).tolist() == [
        0x7FC0,
        0x7FC0,
    ]


# -- API properties --------------------------------------------------------------------------


def test_identity_returns_the_input():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert cast_array(x, DTYPES["F32"], DTYPES["F32"]) is x


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_shapes_readonly_and_noncontiguous_inputs(src, dst):
    base = (np.arange(-30, 30, dtype=np.float64) * 0.37).astype(DTYPES[src].numpy)
    ro = base.reshape(3, 4, 5)
    ro.flags.writeable = False
    out = cast_array(ro, DTYPES[src], DTYPES[dst])
    assert out.shape == (3, 4, 5)
    strided = base.reshape(6, 10)[:, ::3]
    np.testing.assert_array_equal(
        cast_array(strided, DTYPES[src], DTYPES[dst]).view(UINT[size(dst)]),
        torch_bits(np.ascontiguousarray(strided), src, dst).reshape(strided.shape),
    )


def test_large_arrays_use_blocks_and_stay_exact():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 1 << 32, 300_001, dtype=np.uint32).view(np.float32)
    for dst in ("F16", "BF16", "F8_E4M3"):
        assert_same_bits(x, "F32", dst)


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_is_exact_cast_matches_round_trips(src, dst):
    if size(src) <= 2:
        x = all_patterns(src)
    else:
        x = np.concatenate([boundary_values("F16"), specials()]).astype(DTYPES[src].numpy)
        x = np.concatenate([x, np.float64(1 + 2**-40).astype(DTYPES[src].numpy, copy=False)[None]])
    x = x[~np.isnan(x.astype(np.float64))]
    back = cast_array(cast_array(x, DTYPES[src], DTYPES[dst]), DTYPES[dst], DTYPES[src])
    exact = bool(np.all(back.view(UINT[size(src)]) == x.view(UINT[size(src)])))
    assert is_exact_cast(DTYPES[src], DTYPES[dst]) == exact
    assert set(FORMATS) == set(CAST_TARGETS)


@pytest.mark.parametrize("specials_every", [0, 1000, 20, 3])
def test_f16_fast_normal_path_and_its_fallbacks(specials_every):
    """Normal-range values take the short path; zeros/subnormals/inf/NaN mixed in take the full one."""
    rng = np.random.default_rng(specials_every)
    w = rng.integers(113 << 23, 143 << 23, 200_000, dtype=np.uint64).astype(np.uint32)
    w |= rng.integers(0, 2, w.size, dtype=np.uint32) << np.uint32(31)
    if specials_every:
        idx = np.arange(0, w.size, specials_every)
        w[idx] = rng.integers(0, 1 << 32, idx.size, dtype=np.uint64).astype(np.uint32)
        w[idx[::2]] &= np.uint32(0x80FFFFFF)  # zeros and F16 subnormals / underflow
    assert_same_bits(w.view(np.float32), "F32", "F16")
    assert_same_bits(w.view(np.float32).astype(np.float64), "F64", "F16")
