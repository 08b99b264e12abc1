"""Streamed statistics against torch/numpy computed on the whole tensor at once."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.torch import save_file

from inspector.core import stats as stats_mod
from inspector.core.opening import open_checkpoint
from inspector.core.progress import Progress, run_job
from inspector.core.stats import compute_stats, histogram, tensor_stats, value_histogram


def _write(tmp_path, **tensors):
    path = tmp_path / "m.safetensors"
    save_file(tensors, path)
    return open_checkpoint(path)


def test_stats_match_torch_across_many_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(stats_mod, "STATS_CHUNK_BYTES", 1000)  # force ~100 chunks
    g = torch.Generator().manual_seed(3)
    t = torch.randn(200, 130, generator=g, dtype=torch.float64) * 5 + 2
    ckpt = _write(tmp_path, t=t)
    s = tensor_stats(ckpt, ckpt["t"])
    assert s.numel == t.numel()
    assert s.min == t.min().item() and s.max == t.max().item()
    assert s.mean == pytest.approx(t.mean().item(), rel=1e-12)
    assert s.std == pytest.approx(t.std(unbiased=False).item(), rel=1e-10)
    assert (s.nan, s.inf) == (0, 0)


def test_nan_and_inf_are_counted_apart_from_the_finite_stats(tmp_path):
    t = torch.tensor([1.0, float("nan"), 3.0, float("inf"), -float("inf"), float("nan")])
    ckpt = _write(tmp_path, t=t.to(torch.bfloat16))
    s = tensor_stats(ckpt, ckpt["t"])
    assert (s.nan, s.inf) == (2, 2)
    assert (s.min, s.max, s.mean, s.std) == (1.0, 3.0, 2.0, 1.0)


def test_all_nan_and_empty_tensors_have_no_numbers(tmp_path):
    ckpt = _write(tmp_path, a=torch.full((3,), float("nan")), e=torch.zeros(0, 4))
    a, e = tensor_stats(ckpt, ckpt["a"]), tensor_stats(ckpt, ckpt["e"])
    assert a.min is None and a.nan == 3
    assert e.numel == 0 and e.mean is None and e.nan == 0


def test_integer_and_bool_tensors(tmp_path):
    ckpt = _write(tmp_path, i=torch.arange(-5, 6), b=torch.tensor([True, False, True, True]))
    i, b = tensor_stats(ckpt, ckpt["i"]), tensor_stats(ckpt, ckpt["b"])
    assert (i.min, i.max, i.mean) == (-5.0, 5.0, 0.0)
    assert b.mean == 0.75


def test_compute_stats_reports_progress_to_the_total(tmp_path):
    ckpt = _write(tmp_path, a=torch.ones(1000), b=torch.arange(10))
    seen: list[Progress] = []
    result = run_job(compute_stats(ckpt), seen.append)
    assert set(result) == {"a", "b"}
    assert seen[-1].done == seen[-1].total == ckpt.total_nbytes
    dones = [p.done for p in seen]
    assert dones == sorted(dones)


def test_closing_compute_stats_stops_it(tmp_path):
    ckpt = _write(tmp_path, a=torch.ones(10), b=torch.ones(10))
    job = compute_stats(ckpt)
    next(job)
    job.close()  # cancel: no exception, nothing left running
    with pytest.raises(StopIteration):
        next(job)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=0, max_size=300))
def test_stats_property_against_numpy(values):
    arr = np.array(values, dtype=np.float32)
    acc = stats_mod._Moments()
    for part in np.array_split(arr, 7):
        acc.add(part)
    finite = arr[np.isfinite(arr)].astype(np.float64)
    assert acc.nan == int(np.isnan(arr).sum())
    assert acc.inf == int(np.isinf(arr).sum())
    assert acc.count == finite.size
    if finite.size:
        assert acc.min == finite.min() and acc.max == finite.max()
        scale = max(1.0, float(np.abs(finite).max()))
        assert math.isclose(acc.mean, float(finite.mean()), rel_tol=1e-9, abs_tol=1e-9 * scale)


def test_histograms(tmp_path):
    t = torch.tensor([0.0, 0.1, 0.2, 0.9, 1.0, float("nan"), float("inf")])
    edges, counts = histogram(t.numpy(), bins=2)
    assert edges.tolist() == [0.0, 0.5, 1.0]
    assert counts.tolist() == [3, 2]
    ckpt = _write(tmp_path, t=t)
    e2, c2 = value_histogram(ckpt, ckpt["t"], bins=2)
    assert e2.tolist() == edges.tolist() and c2.tolist() == counts.tolist()
    _, c3 = value_histogram(ckpt, ckpt["t"], bins=4, value_range=(0.0, 2.0))
    assert c3.tolist() == [3, 1, 1, 0]


def test_stats_and_histogram_job_matches_the_core_and_is_cancellable(tmp_path):
    from inspector.core.dtypes import DTYPES
    from inspector.core.opening import open_checkpoint
    from inspector.core.progress import run_job
    from inspector.core.save.writer import save_arrays
    from inspector.core.stats import stats_and_histogram, tensor_stats, value_histogram

    model_file = tmp_path / "m.safetensors"
    x = np.random.default_rng(0).normal(size=(16, 16))
    save_arrays(
        model_file,
        [
            ("w", DTYPES["F64"], x),
            ("h", DTYPES["BF16"], x.astype(DTYPES["BF16"].numpy)),
            ("ids", DTYPES["I64"], np.arange(9)),
        ],
    )
    ckpt = open_checkpoint(model_file)
    for name in ("w", "h", "ids"):
        t = ckpt[name]
        s, edges, counts = run_job(stats_and_histogram(ckpt, t))
        assert s == tensor_stats(ckpt, t)
        e2, c2 = value_histogram(ckpt, t, bins=64)
        assert np.allclose(edges, e2) and counts.sum() == c2.sum() == t.numel
    job = stats_and_histogram(ckpt, ckpt["w"])
    next(job)
    job.close()  # stopping half way is fine


def _exact_moments(values):
    """Mean and population std from exact rationals, the root taken in 60-digit decimals (the
    variance of huge or subnormal values is far outside float64: ~1e600 or ~1e-645)."""
    from decimal import Context
    from fractions import Fraction

    xs = [Fraction(v) for v in values]
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / len(xs)
    ctx = Context(prec=60, Emin=-999999, Emax=999999)
    std = ctx.sqrt(ctx.divide(var.numerator, var.denominator))
    return float(mean), float(std)


def test_huge_magnitudes_across_blocks_and_chunks(tmp_path, monkeypatch):
    """Values near 1e300 (their squares overflow float64) spread over several blocks and
    chunks, mixed with inf and NaN in more than one chunk: mean and std match exact rationals,
    inf and NaN are counted across chunks (mutation testing found this path unchecked)."""
    monkeypatch.setattr(stats_mod, "_STATS_BLOCK", 4)
    monkeypatch.setattr(stats_mod, "STATS_CHUNK_BYTES", 64)
    rng = np.random.default_rng(5)
    finite = [*(rng.uniform(-1, 1, 37) * 1e300).tolist(), 3e299, -7e299]
    values = np.array([*finite[:20], np.inf, np.nan, *finite[20:], -np.inf, np.nan, np.inf])
    save_file({"x": torch.from_numpy(values)}, str(tmp_path / "h.safetensors"))
    with open_checkpoint(tmp_path / "h.safetensors") as ckpt:
        s = run_job(compute_stats(ckpt))["x"]
    mean, std = _exact_moments(finite)
    assert (s.nan, s.inf) == (2, 3)
    assert (s.min, s.max) == (min(finite), max(finite))
    assert math.isclose(s.mean, mean, rel_tol=1e-12, abs_tol=1e286)
    assert math.isclose(s.std, std, rel_tol=1e-12)


def test_subnormal_values_keep_their_std(tmp_path):
    """Tiny chunks are scaled up (exact), not down: their squares vanish in float64 (the std of
    these was 0) and halving a subnormal loses it (5e-324 / 2 == 0)."""
    values = [5e-324, 1.5e-323, 1e-322, 0.0]
    save_file({"x": torch.tensor(values, dtype=torch.float64)}, str(tmp_path / "t.safetensors"))
    with open_checkpoint(tmp_path / "t.safetensors") as ckpt:
        s = run_job(compute_stats(ckpt))["x"]
    mean, std = _exact_moments(values)
    assert (s.min, s.max) == (0.0, 1e-322)
    assert abs(s.mean - mean) <= 5e-324 and s.mean != 0.0
    assert s.std == pytest.approx(std, rel=0.2, abs=0)  # the std itself is subnormal: few bits


def test_histograms_over_many_chunks_complex_and_all_nan(tmp_path, monkeypatch):
    """Counts add up over chunks, complex tensors use |z|, a tensor with no finite value gets
    the [0, 1] range, and edges are exact (mutation survivors in the histogram paths)."""
    from inspector.core.stats import bin_edges, stats_and_histogram

    monkeypatch.setattr(stats_mod, "STATS_CHUNK_BYTES", 256)
    x = torch.arange(-500, 500, dtype=torch.float32) / 10  # 4000 bytes: 16 chunks
    z = torch.tensor([3 + 4j, -6 + 8j, 0j], dtype=torch.complex64)
    bad = torch.tensor([math.nan, math.inf, -math.inf])
    save_file({"x": x, "z": z, "bad": bad}, str(tmp_path / "h.safetensors"))
    with open_checkpoint(tmp_path / "h.safetensors") as ckpt:
        edges, counts = value_histogram(ckpt, ckpt["x"])
        assert len(counts) == 64 and int(counts.sum()) == 1000
        assert (edges[0], edges[-1]) == (-50.0, float(np.float32(49.9)))
        s, edges2, counts2 = run_job(stats_and_histogram(ckpt, ckpt["x"]))
        assert np.array_equal(counts2, counts) and np.array_equal(edges2, edges)
        s, _, zc = run_job(stats_and_histogram(ckpt, ckpt["z"], bins=2))
        assert (s.min, s.max, s.mean) == (0.0, 10.0, 5.0) and list(zc) == [1, 2]
        s, bedges, bcounts = run_job(stats_and_histogram(ckpt, ckpt["bad"], bins=4))
        assert (s.name, s.min, s.nan, s.inf) == ("bad", None, 1, 2)
        assert list(bedges) == [0.0, 0.25, 0.5, 0.75, 1.0] and int(bcounts.sum()) == 0
        e, c = value_histogram(ckpt, ckpt["bad"], bins=4)
        assert list(e) == [0.0, 0.25, 0.5, 0.75, 1.0] and int(c.sum()) == 0
    assert list(bin_edges(-2.0, 6.0, 4)) == [-2.0, 0.0, 2.0, 4.0, 6.0]
    e, c = histogram(np.array([np.nan, np.inf]), bins=2)
    assert list(e) == [0.0, 0.5, 1.0] and list(c) == [0, 0]


def test_stats_of_a_subset(tmp_path):
    save_file({"a": torch.ones(3), "b": torch.zeros(2)}, str(tmp_path / "s.safetensors"))
    with open_checkpoint(tmp_path / "s.safetensors") as ckpt:
        only_b = run_job(compute_stats(ckpt, [ckpt["b"]]))
    assert list(only_b) == ["b"] and only_b["b"].name == "b" and only_b["b"].max == 0.0


def test_progress_names_each_tensor_and_counts_every_chunk(tmp_path, monkeypatch):
    from inspector.core.stats import stats_and_histogram

    monkeypatch.setattr(stats_mod, "STATS_CHUNK_BYTES", 16)
    ckpt = _write(tmp_path, a=torch.ones(6), b=torch.arange(3, dtype=torch.int64))
    seen: list[Progress] = []
    run_job(compute_stats(ckpt), seen.append)
    assert [(p.done, p.name) for p in seen] == [
        (0, ""),
        (16, "b"),
        (24, "b"),
        (40, "a"),
        (48, "a"),
        (48, ""),
    ]  # fmt: skip  (file order: safetensors puts the 8-byte dtype first)
    seen.clear()
    run_job(stats_and_histogram(ckpt, ckpt["a"]), seen.append)
    assert [p.done for p in seen] == [0, 16, 24, 40, 48]
    assert {(p.total, p.name) for p in seen} == {(48, "a")}


def test_histograms_count_in_integers_over_the_values_own_range(tmp_path):
    """Without a range the histogram spans the values (not [0, 1]); 64 bins by default; counts
    are integers; a complex tensor's histogram is of |z|, not of its real parts."""
    from inspector.core.stats import stats_and_histogram

    edges, counts = histogram(np.array([5.0, 6.0, 7.0]))
    assert (len(counts), edges[0], edges[-1]) == (64, 5.0, 7.0)
    ckpt = _write(
        tmp_path, z=torch.tensor([3 + 4j, 6 + 8j], dtype=torch.complex64), x=torch.ones(2)
    )
    e, c = value_histogram(ckpt, ckpt["z"], bins=2)
    assert list(e) == [5.0, 7.5, 10.0] and list(c) == [1, 1]
    for counts in (
        c,
        value_histogram(ckpt, ckpt["x"])[1],
        run_job(stats_and_histogram(ckpt, ckpt["x"]))[2],
    ):
        assert counts.dtype == np.int64


def test_tiny_values_are_scaled_up_before_squaring(tmp_path):
    """1e-200 and 3e-200 (squares underflow to 0): the std is 1e-200, not 0."""
    ckpt = _write(tmp_path, x=torch.tensor([1e-200, 3e-200], dtype=torch.float64))
    s = tensor_stats(ckpt, ckpt["x"])
    assert s.mean == pytest.approx(2e-200, rel=1e-15, abs=0)
    assert s.std == pytest.approx(1e-200, rel=1e-15, abs=0)


def test_bin_edges_of_a_single_value_widen_around_it():
    from inspector.core.stats import bin_edges

    assert list(bin_edges(3.0, 3.0, 2)) == [2.5, 3.0, 3.5]
    big = bin_edges(1e300, 1e300, 2)  # ±0.5 is lost at 1e300: widened relative to the value
    assert big[0] < 1e300 < big[-1] and big[1] == 1e300


@pytest.mark.parametrize(
    "values", [[5e-324, 1.5e-323, 1e-322, 0.0], [0.0, 1e-200, 3e-200], [1e-200, 0.0, 3e-200, 0.0]]
)
def test_tiny_and_zero_blocks_merge_without_losing_the_std(tmp_path, monkeypatch, values):
    """One value per block: a block of zeros has no scale of its own, so merging it (first or
    after tiny ones) must keep the tiny blocks' spread."""
    monkeypatch.setattr(stats_mod, "_STATS_BLOCK", 1)
    ckpt = _write(tmp_path, x=torch.tensor(values, dtype=torch.float64))
    s = tensor_stats(ckpt, ckpt["x"])
    mean, std = _exact_moments(values)
    assert s.mean == pytest.approx(mean, rel=1e-12, abs=0)
    assert s.std == pytest.approx(std, rel=1e-12, abs=0)


@pytest.mark.parametrize(("dtype", "nbytes"), [("F4", 32), ("F6_E2M3", 48)])
def test_progress_of_packed_tensors_counts_their_packed_bytes(tmp_path, monkeypatch, dtype, nbytes):
    """A packed chunk arrives unpacked (one value per byte or more); progress counts the bytes
    the file holds, so it ends exactly at the tensor's size."""
    import json
    import struct

    monkeypatch.setattr(stats_mod, "STATS_CHUNK_BYTES", 12)
    header = json.dumps({"p": {"dtype": dtype, "shape": [64], "data_offsets": [0, nbytes]}})
    header += " " * (-len(header) % 8)
    path = tmp_path / "p.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header.encode() + bytes(nbytes))
    seen: list[Progress] = []
    with open_checkpoint(path) as ckpt:
        run_job(compute_stats(ckpt), seen.append)
    dones = [p.done for p in seen]
    assert dones == [0, *range(12, nbytes, 12), nbytes, nbytes]  # 12-byte chunks, then the end
    assert all(type(d) is int for d in dones)


def test_a_tiny_block_then_a_normal_one_centred_on_zero(tmp_path, monkeypatch):
    """A block whose mean is 0 but whose spread is not ([-1, 1]) has a scale of its own."""
    monkeypatch.setattr(stats_mod, "_STATS_BLOCK", 2)
    values = [1e-300, 5e-301, -1.0, 1.0]
    ckpt = _write(tmp_path, x=torch.tensor(values, dtype=torch.float64))
    s = tensor_stats(ckpt, ckpt["x"])
    mean, std = _exact_moments(values)
    assert s.mean == pytest.approx(mean, rel=1e-12, abs=1e-300)
    assert s.std == pytest.approx(std, rel=1e-12, abs=0)


def test_values_one_step_apart_near_1e_150_keep_their_std(tmp_path):
    """Values at 1e-150 (above the scale-up threshold when it was 2**-500) one float step
    apart: their deviations (~1e-166) squared underflowed to 0, and the std read 0 for values
    that are not all equal. The std is numpy's on the values scaled up by 2**500 (exact)."""
    a = 1e-150
    b = float(np.nextafter(a, 1.0))
    x = np.array([a, b, a, b])
    ckpt = _write(tmp_path, x=torch.from_numpy(x))
    s = tensor_stats(ckpt, ckpt["x"])
    assert s.std == pytest.approx(math.ldexp(float(np.std(np.ldexp(x, 500))), -500), rel=1e-12)
    assert s.std > 0
    assert (s.min, s.max) == (a, b)
