"""The branch-free F32 rounding kernel against torch: its codes on a sweep through every F32 bit
pattern (all exponents, signs, NaN payloads), and the rounded values it hands to the report.

All 2**32 patterns were compared once against the previous kernels (equal); this sweep keeps
the proof cheap enough for every run.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from inspector.core.cast.narrow_float import ROUNDED_FROM_F32, round_f32

TORCH = {
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "F8_E4M3": torch.float8_e4m3fn,
    "F8_E5M2": torch.float8_e5m2,
}
INT = {2: torch.int16, 1: torch.uint8}


def sweep() -> np.ndarray:
    """About two million F32 bit patterns, both signs: a prime stride through all of them, every
    pattern within 40 of each exponent boundary, and patterns at and next to F16's midpoints."""
    stride = np.arange(0, 1 << 31, 4099, dtype=np.uint64)
    exps = np.arange(256, dtype=np.uint64) << np.uint64(23)
    near = (exps[:, None] + np.arange(-40, 41, dtype=np.int64).astype(np.uint64)[None, :]).ravel()
    mids = np.arange(0, 1 << 31, 1 << 17, dtype=np.uint64)  # F16 drops 13 bits: 0x1000 is half
    around = (mids[:, None] + np.array([0x7FF, 0x800, 0x801, 0xFFF], np.uint64)).ravel()
    bits = np.concatenate([stride, near, around]) & np.uint64(0xFFFFFFFF)
    bits = np.concatenate([bits, bits | np.uint64(0x80000000)])
    return np.unique(bits.astype(np.uint32))


@pytest.mark.parametrize("dst", sorted(ROUNDED_FROM_F32))
def test_codes_and_values_equal_torch(dst):
    w = sweep()
    out = np.empty(w.size, np.uint16 if dst in ("F16", "BF16") else np.uint8)
    with np.errstate(all="ignore"):
        got = round_f32(w, dst, out, values=True)
    t = torch.from_numpy(w.view(np.int32)).view(torch.float32).to(TORCH[dst])
    ref = t.view(INT[out.itemsize]).numpy().view(out.dtype)
    bad = np.flatnonzero(out != ref)
    assert not bad.size, [(hex(int(w[i])), hex(int(out[i])), hex(int(ref[i]))) for i in bad[:5]]
    want = t.float().abs().numpy()
    same = (got.rounded == want) | (np.isnan(got.rounded) & np.isnan(want))
    assert same.all(), w[~same][:5]
    assert np.array_equal(got.magnitude.view(np.uint32), w & np.uint32(0x7FFFFFFF))


@pytest.mark.parametrize("dst", sorted(ROUNDED_FROM_F32))
def test_ties_round_to_even(dst):
    """Exact midpoints between two neighbours, where only the even rule decides."""
    drop = {"F16": 13, "BF16": 16, "F8_E4M3": 20, "F8_E5M2": 21}[dst]
    base = np.arange(0x38000000, 0x47000000, 1 << (drop + 1), dtype=np.uint64)
    bits = np.concatenate([base, base + (1 << drop)]) | (1 << (drop - 1))  # both parities
    w = np.concatenate([bits, bits | 0x80000000]).astype(np.uint32)
    out = np.empty(w.size, np.uint16 if dst in ("F16", "BF16") else np.uint8)
    with np.errstate(all="ignore"):
        round_f32(w, dst, out)
    t = torch.from_numpy(w.view(np.int32)).view(torch.float32).to(TORCH[dst])
    assert np.array_equal(out, t.view(INT[out.itemsize]).numpy().view(out.dtype))


@pytest.mark.parametrize("dst", sorted(ROUNDED_FROM_F32))
@pytest.mark.parametrize("bits", [0x7F800001, 0xFF800001, 0x7FC00000, 0x7F800000, 0x7F7FFFFF])
def test_a_block_of_one_special_value(dst, bits):
    """NaN, inf and the largest float alone in a block: the checks that look at the block's
    largest value must still see them."""
    w = np.array([bits], np.uint32)
    out = np.empty(1, np.uint16 if dst in ("F16", "BF16") else np.uint8)
    with np.errstate(all="ignore"):
        got = round_f32(w, dst, out, values=True)
    t = torch.from_numpy(w.view(np.int32)).view(torch.float32).to(TORCH[dst])
    assert out[0] == t.view(INT[out.itemsize]).numpy().view(out.dtype)[0]
    want = t.float().abs().numpy()
    assert got.rounded[0] == want[0] or (np.isnan(got.rounded[0]) and np.isnan(want[0]))


@pytest.mark.parametrize("src", ["F32", "F64"])
@pytest.mark.parametrize("dst", ["BF16", "F16", "F8_E4M3"])
def test_an_empty_array_casts_to_an_empty_array(src, dst):
    """No values (a dequantized [rows, 0] weight): an empty array of the target, not numpy's
    "zero-size array to reduction operation maximum" from looking for the largest value."""
    from inspector.core.cast.kernels import cast_array
    from inspector.core.dtypes import DTYPES

    got = cast_array(np.empty((4, 0), DTYPES[src].numpy), DTYPES[src], DTYPES[dst])
    assert got.shape == (4, 0) and got.dtype == DTYPES[dst].numpy
