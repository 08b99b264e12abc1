"""The preview in worker processes: the same reports as on threads, a source replaced before
a worker opens it refused, and a cancel or an error leaves no process behind."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from inspector.core.cast.worker_policy import PROCESSES_ENV
from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.quantize.preview import preview_checkpoint
from inspector.core.quantize.schemes import SCHEMES

from .models import llama_folder


def _figures(reports) -> list:  # type: ignore[no-untyped-def]
    return [
        (r.scheme, r.bytes_out, [s.name for s in r.skipped],
         [(w.name, w.bytes_out, w.figures.max_abs, w.figures.max_rel, w.figures.err_sq,
           w.figures.ref_sq, w.figures.rms_rel_err) for w in r.weights])
        for r in reports
    ]  # fmt: skip


@pytest.mark.parametrize("shards", [1, 3])
def test_processes_give_the_threads_reports(tmp_path, shards: int) -> None:
    folder = llama_folder(tmp_path / "m", shards=shards, layers=2, outliers=1)
    schemes = list(SCHEMES.values())
    with open_checkpoint(str(folder)) as ckpt:
        threads = run_job(preview_checkpoint(ckpt, schemes, chunk_bytes=64 << 10, processes=0))
        procs = run_job(preview_checkpoint(ckpt, schemes, chunk_bytes=64 << 10, processes=2))
    assert _figures(procs) == _figures(threads)
    assert all(len(r.weights) == 14 for r in procs)
    assert multiprocessing.active_children() == []


def test_a_source_replaced_before_the_workers_open_it_is_refused(tmp_path) -> None:
    folder = llama_folder(tmp_path / "m", layers=1)
    other = llama_folder(tmp_path / "other", layers=1, seed=9)
    with open_checkpoint(str(folder)) as ckpt:
        os.replace(other / "model.safetensors", folder / "model.safetensors")
        job = preview_checkpoint(ckpt, [SCHEMES["W4A16"]], processes=2)
        with pytest.raises(CheckpointError, match="changed on disk since it was opened"):
            run_job(job)
    assert multiprocessing.active_children() == []


def test_a_cancelled_preview_stops_its_workers(tmp_path) -> None:
    folder = llama_folder(tmp_path / "m", layers=3)
    with open_checkpoint(str(folder)) as ckpt:
        job = preview_checkpoint(ckpt, list(SCHEMES.values()), chunk_bytes=16 << 10, processes=2)
        next(job)
        while not multiprocessing.active_children():
            next(job)
        job.close()  # what the window's Cancel and Ctrl-C do
    assert multiprocessing.active_children() == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkill_of_a_preview_leaves_no_process(tmp_path) -> None:
    """``kill -9`` of the program mid-preview: its workers end with it (as a cast's do)."""
    from tests.core.test_cast_orphans import _children, kill_and_wait_for

    folder = llama_folder(tmp_path / "m", layers=8, hidden=512, inter=1024)
    env = dict(os.environ, PYTHONPATH=os.getcwd(), **{PROCESSES_ENV: "2"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector", "quantize", str(folder), "--preview"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    tree: set[int] = set()
    deadline = time.monotonic() + 30
    while len(tree) < 2 and time.monotonic() < deadline and proc.poll() is None:
        tree |= _children(proc.pid)  # the workers (and the resource tracker) as they start
        time.sleep(0.02)
    if proc.poll() is not None:
        pytest.skip("the preview ended before the kill")
    kill_and_wait_for(proc, tree | _children(proc.pid))
    proc.stdout.read()  # the pipe closes: no survivor holds its write end


def test_killing_a_pool_drops_the_work_in_hand() -> None:
    """A preview's workers write nothing, so a cancel kills them rather than waiting for the
    weight in hand (a 470 MB weight of a 70B model: seconds of no answer)."""
    import time as clock

    from inspector.core.cast.pool import start_processes
    from inspector.core.cast.worker_boot import kill_workers

    pool = start_processes(2)
    asleep = [pool.submit(clock.sleep, 120) for _ in range(3)]
    while not any(f.running() for f in asleep):
        clock.sleep(0.01)
    kill_workers(pool)  # returns at once: a wait would take two minutes
    assert multiprocessing.active_children() == []
    assert all(f.done() and (f.cancelled() or f.exception() is not None) for f in asleep)


def test_a_cancel_kills_the_workers_and_an_error_too(tmp_path, monkeypatch) -> None:
    import inspector.core.quantize.preview as preview

    calls: list[str] = []
    monkeypatch.setattr(preview, "kill_workers", lambda pool: calls.append("kill") or
                        preview.stop_workers(pool))  # fmt: skip
    folder = llama_folder(tmp_path / "m", layers=2)
    with open_checkpoint(str(folder)) as ckpt:
        run_job(preview_checkpoint(ckpt, [SCHEMES["W4A16"]], processes=2))
        assert calls == []  # finished: the idle workers are stopped
        job = preview_checkpoint(ckpt, [SCHEMES["W4A16"]], processes=2)
        next(job)
        next(job)
        job.close()
    assert calls == ["kill"]


def _die(_task: object) -> None:
    os._exit(3)  # as the OOM killer ends a worker: no exception, no result


def test_a_worker_that_dies_is_one_line(tmp_path, monkeypatch) -> None:
    """The kernel's OOM killer (or kill -9) ends a worker: one clear error, no traceback."""
    import inspector.core.quantize.preview as preview

    monkeypatch.setattr(preview, "measure_in_worker", _die)
    folder = llama_folder(tmp_path / "m", layers=1)
    with (
        open_checkpoint(str(folder)) as ckpt,
        pytest.raises(CheckpointError, match="preview worker process stopped unexpectedly"),
    ):
        run_job(preview_checkpoint(ckpt, [SCHEMES["W4A16"]], processes=2))
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("keep_all", [False, True])
def test_a_training_checkpoint_is_measured_as_it_was_opened(tmp_path, keep_all: bool) -> None:
    """A Lightning checkpoint read as its model, or whole (the window's "open everything"):
    the workers open it the same way, so they find the same weights under the same names."""
    torch = pytest.importorskip("torch")

    from .models import llama_tensors

    state = {n: torch.from_numpy(v.astype(np.float32)).bfloat16()
             for n, _d, v in llama_tensors(dtype="F32")}  # fmt: skip
    path = tmp_path / "last.ckpt"
    torch.save({"state_dict": state, "optimizer_states": [], "epoch": 3}, path)
    schemes = [SCHEMES["W4A16"], SCHEMES["FP8_DYNAMIC"]]
    with open_checkpoint(str(path), keep_all=keep_all) as ckpt:
        threads = run_job(preview_checkpoint(ckpt, schemes, processes=0))
        procs = run_job(preview_checkpoint(ckpt, schemes, processes=2))
    assert _figures(procs) == _figures(threads)
    assert len(procs[0].weights) == (8 if keep_all else 7)  # whole: "state_dict.lm_head" too
