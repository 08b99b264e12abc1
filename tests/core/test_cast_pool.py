"""Chunks cast and measured on two threads: the same bytes as cast_array, the same report as the
float64 reference (maxima and counts bit for bit, the mean within float64 rounding), in order;
errors surface in the cast, and a cancelled cast leaves no thread behind."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.numpy import save_file

from inspector.core.cast.job import cast_checkpoint
from inspector.core.cast.kernels import cast_array
from inspector.core.cast.pool import ChunkCaster, cast_chunk
from inspector.core.cast.precision import BLOCK, ErrorAccumulator
from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint

from .ctrl_c import ctrl_c_on_first_call, sigint_raises
from .precision_reference import Float64ErrorAccumulator, assert_same_stats

F32 = DTYPES["F32"]
FUSED = ["F16", "BF16", "F8_E4M3", "F8_E5M2"]  # F32 → these take the fused kernel
SPECIAL = np.array(
    [0.0, -0.0, 1e-45, -1e-45, 1e-40, 6e-8, 3e-8, 2.9e-8, 5.96e-8, 1e-10, 1.0001, 65504.0,
     65519.99, 65520.0, 1e5, 3.4e38, -3.4e38, 448.0, 463.9, 464.0, 464.1, 470.0, -470.0, 1e6,
     57343.0, 57344.0, 61439.0, 61440.0, np.inf, -np.inf, np.nan, -np.nan, 1.5, -2.75, 0.1,
     1 / 3, 2.0**-6, 2.0**-7 * 1.5, 2.0**-10, 2.0**-14, 2.0**-15, 2.0**-17, 2.0**-25],
    dtype=np.float32,
)  # fmt: skip


def _reference(x: np.ndarray, dst: str):
    ref = Float64ErrorAccumulator(F32, DTYPES[dst])
    ref.update(x, cast_array(x, F32, DTYPES[dst]))
    return ref.result()


def _unfused(x: np.ndarray, dst: str):
    acc = ErrorAccumulator(F32, DTYPES[dst])
    acc.update(x, cast_array(x, F32, DTYPES[dst]))
    return acc.result()


def _fused(x: np.ndarray, dst: str):
    acc = ErrorAccumulator(F32, DTYPES[dst])
    out, part = cast_chunk(x.view(np.uint8), F32, DTYPES[dst], acc)
    return out, part.result()


@pytest.mark.parametrize("dst", FUSED)
def test_fused_chunk_equals_cast_array_and_the_float64_report(dst):
    rng = np.random.default_rng(3)
    noise = (rng.standard_normal(150_000) * 10.0 ** rng.integers(-9, 6, 150_000)).astype(np.float32)
    for x in (SPECIAL, SPECIAL[np.isfinite(SPECIAL)], noise, np.concatenate([noise, SPECIAL])):
        out, stats = _fused(x, dst)
        assert out.tobytes() == cast_array(x, F32, DTYPES[dst]).tobytes()
        assert stats == _unfused(x, dst)  # the same blocks, so the same float64 sums
        assert_same_stats(
            stats, _reference(x, dst), rel_tol=1e-15
        )  # other summation order: a few ulps


def test_underflow_and_saturation_counts_of_the_fused_path():
    x = np.array([0.0, -0.0, 1e-10, 1.0001, 470.0, -np.inf, np.nan], np.float32)
    stats = _fused(x, "F8_E4M3")[1]
    assert (stats.underflow, stats.overflow, stats.nan) == (1, 2, 1)
    assert _fused(np.array([0.0, -0.0, 1e-10, 1.0001], np.float32), "F16")[1].underflow == 1


@pytest.mark.parametrize("dst", FUSED)
def test_underflows_after_a_block_that_already_reached_ratio_one(dst):
    # once a block's largest relative error is 1 (a value became 0), the later blocks of the
    # chunk count underflows without dividing: with zeros, -0, saturated and NaN values among them
    rng = np.random.default_rng(11)
    n = BLOCK * 4 + 123
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-46, 3, n)).astype(np.float32)
    x[0] = 1e-45  # block 0 underflows for every format (BF16 only below F32 normals)
    x[BLOCK + 5 : BLOCK + 50] = 0.0
    x[BLOCK + 50 : BLOCK + 60] = -0.0
    x[2 * BLOCK + 7 : 2 * BLOCK + 9] = [470.0, -1e5]  # E4M3 saturates: the subset path
    x[3 * BLOCK + 1] = np.nan
    out, stats = _fused(x, dst)
    assert out.tobytes() == cast_array(x, F32, DTYPES[dst]).tobytes()
    assert stats == _unfused(x, dst)
    reference = _reference(x, dst)
    assert reference.underflow > 100
    assert_same_stats(stats, reference, rel_tol=1e-15)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(FUSED),
    st.lists(st.floats(width=32) | st.sampled_from(list(SPECIAL)), min_size=1, max_size=40),
)
def test_fused_path_on_any_values(dst, values):
    x = np.array(values, dtype=np.float32)
    out, stats = _fused(x, dst)
    assert out.tobytes() == cast_array(x, F32, DTYPES[dst]).tobytes()
    assert stats == _unfused(x, dst)
    assert_same_stats(stats, _reference(x, dst))


@pytest.mark.parametrize(("src", "dst"), [("F32", "F16"), ("F64", "BF16"), ("BF16", "F8_E4M3")])
def test_chunks_come_back_in_order_with_the_inline_report(src, dst):
    rng = np.random.default_rng(11)
    s, d = DTYPES[src], DTYPES[dst]
    x = cast_array(rng.standard_normal(300_000) * 1e3, DTYPES["F64"], s)
    x[::997] = cast_array(np.array([1e-9]), DTYPES["F64"], s)[0]
    inline, pooled = ErrorAccumulator(s, d), ErrorAccumulator(s, d)
    inline.update(x, cast_array(x, s, d))
    caster, parts = ChunkCaster(workers=2, depth=3), []
    raw = x.view(np.uint8)
    step = 10_000 * s.bits // 8
    try:
        for i in range(0, raw.size, step):
            caster.submit(raw[i : i + step].copy(), s, d, pooled)
            parts.extend(caster.ready())
        parts.extend(caster.ready(drain=True))
    finally:
        caster.close()
    assert b"".join(p.tobytes() for p in parts) == cast_array(x, s, d).tobytes()
    assert_same_stats(
        pooled.result(), inline.result(), rel_tol=1e-15
    )  # sums grouped by chunk: a few ulps


def test_an_error_in_a_chunk_surfaces_in_order():
    class Broken(ErrorAccumulator):
        def fresh(self):
            raise ValueError("boom")

    caster = ChunkCaster()
    try:
        caster.submit(np.zeros(12, np.uint8), F32, DTYPES["F16"], None)
        caster.submit(np.zeros(12, np.uint8), F32, DTYPES["F16"], Broken(F32, DTYPES["F16"]))
        ready = caster.ready(drain=True)
        assert next(ready).tobytes() == bytes(6)  # the chunk before it is still delivered
        with pytest.raises(ValueError, match="boom"):
            next(ready)
    finally:
        caster.close()


def test_a_cancelled_cast_leaves_no_cast_thread(tmp_path):
    save_file(
        {f"t{i}": np.ones(200_000, np.float32) for i in range(4)}, str(tmp_path / "a.safetensors")
    )
    with open_checkpoint(tmp_path / "a.safetensors") as ckpt:
        job = cast_checkpoint(
            ckpt, DTYPES["F16"], str(tmp_path / "o.safetensors"), chunk_bytes=1 << 16
        )
        for _ in range(10):
            next(job)
        assert any(t.name.startswith("cast_") for t in threading.enumerate())
        job.close()  # what Cancel does
    assert not any(t.name.startswith("cast_") for t in threading.enumerate())
    assert not (tmp_path / "o.safetensors").exists()


def test_at_most_depth_chunks_wait_until_drained():
    caster = ChunkCaster(workers=2, depth=3)
    chunk = np.ones(1000, np.float32).view(np.uint8)
    try:
        for _ in range(8):
            caster.submit(chunk.copy(), F32, DTYPES["F16"], None)
        assert len(list(caster.ready())) == 5  # memory stays at `depth` chunks in flight
        assert list(caster.ready()) == []
        assert len(list(caster.ready(drain=True))) == 3
    finally:
        caster.close()


def test_close_waits_for_the_running_chunks_and_may_be_repeated():
    caster = ChunkCaster(workers=2)
    big = np.ones(8 << 20, np.float32).view(np.uint8)  # long enough to be running at close()
    caster.submit(big, F32, DTYPES["F16"], ErrorAccumulator(F32, DTYPES["F16"]))
    caster.submit(big, F32, DTYPES["F16"], None)
    threads = [t for t in threading.enumerate() if t.name.startswith("cast_")]
    caster.close()
    assert threads and not any(t.is_alive() for t in threads)
    caster.close()


def test_ctrl_c_during_close_is_raised_after_every_cast_thread_stopped(monkeypatch):
    """Ctrl-C pressed again and again while a cast stops: one landing inside close() left the
    pools running, or (landing inside a future's lock) a pool thread deadlocked and the
    program hung at exit. close() holds the signal until it is done, then raises it."""
    from concurrent.futures import Future

    cancel_then_ctrl_c, pressed = ctrl_c_on_first_call(Future.cancel)  # mid-close
    caster = ChunkCaster(workers=2)
    big = np.ones(8 << 20, np.float32).view(np.uint8)
    for _ in range(4):
        caster.submit(big, F32, DTYPES["F16"], None)
    threads = [t for t in threading.enumerate() if t.name.startswith("cast_")]
    monkeypatch.setattr(Future, "cancel", cancel_then_ctrl_c)
    with sigint_raises(), pytest.raises(KeyboardInterrupt):
        caster.close()
    assert pressed and threads and not any(t.is_alive() for t in threads)


def test_one_changed_value_in_any_chunk_or_block_makes_the_cast_lossy():
    """ "lossless" survives merging only when no part changed a value, whichever part did; a
    block holding an inf still sees the other values change."""
    from inspector.core.cast.precision import ErrorAccumulator
    from inspector.core.dtypes import DTYPES

    f32, f16 = DTYPES["F32"], DTYPES["F16"]
    same = np.array([1.0, 2.0, -0.5], np.float32)  # exact in F16
    changed = np.array([1.0001], np.float32)

    def merged(*parts):
        total = ErrorAccumulator(f32, f16)
        for x in parts:
            part = total.fresh()
            part.update(x, cast_array(x, f32, f16))
            total.merge(part)
        return total.result().lossless

    assert merged(same, same) is True
    assert merged(changed, same) is False and merged(same, changed) is False
    assert merged(np.array([np.inf, 1.0], np.float32)) is True
    assert merged(np.array([np.inf, 1.0001], np.float32)) is False
