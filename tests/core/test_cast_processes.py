"""Casting in worker processes: the same bytes and report as threads, and every way it can go
wrong (a replaced source, a killed worker, a full disk, a cancel) leaves no output, no temp
file and no process behind."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
import torch
from huggingface_hub import save_torch_state_dict
from safetensors.torch import save_file

from inspector.core.cast import worker_policy
from inspector.core.cast.job import cast_checkpoint, plan_cast
from inspector.core.cast.pool import ChunkCaster, start_processes
from inspector.core.cast.stream import cast_processes
from inspector.core.cast.worker import FileId, RangeTask, cast_range
from inspector.core.cast.worker_policy import PROCESSES_ENV, processes_supported, usable_cores
from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.progress import Progress, run_job

pytestmark = pytest.mark.skipif(not processes_supported(), reason="POSIX pwrite")
CHUNK = 64 << 10  # many chunks per tensor, interleaved with copies


def _state_dict() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(5)
    w = torch.randn(300_000, generator=g) * 0.05
    w[::997] = torch.tensor([1e-9, 70_000.0, float("inf"), float("nan")]).repeat(301)[:301]
    return {
        "a.weight": w.clone(),
        "a.ids": torch.arange(50_000, dtype=torch.int64),  # copied between cast tensors
        "b.weight": (torch.randn(70_001, generator=g) * 3).double(),  # odd size: a short chunk
        "b.half": torch.randn(40_000, generator=g).bfloat16(),
        "c.empty": torch.zeros(0),
        "c.scale": torch.tensor([0.5]),
    }


def _leftovers(folder) -> list[str]:
    return [n for n in os.listdir(folder) if n.endswith((".partial", ".txn"))]


def _cast_with(path, out, target, processes):
    with open_checkpoint(path) as ckpt:
        return run_job(
            cast_checkpoint(ckpt, target, str(out), chunk_bytes=CHUNK, processes=processes)
        )


@pytest.mark.parametrize("target", ["F16", "BF16", "F8_E4M3"])
def test_processes_write_the_bytes_and_report_of_threads(tmp_path, target):
    save_file(_state_dict(), tmp_path / "m.safetensors")
    by_threads = _cast_with(
        tmp_path / "m.safetensors", tmp_path / "t.safetensors", DTYPES[target], 0
    )
    by_processes = _cast_with(
        tmp_path / "m.safetensors", tmp_path / "p.safetensors", DTYPES[target], 2
    )
    assert (tmp_path / "p.safetensors").read_bytes() == (tmp_path / "t.safetensors").read_bytes()
    # merged in chunk order from the same blocks: the same float64 sums, bit for bit
    assert by_processes.to_json_text() == by_threads.to_json_text()
    assert {"a.weight", "b.weight", "c.scale"} <= {t.name for t in by_processes.tensors}
    assert _leftovers(tmp_path) == []


def test_a_sharded_cast_by_processes_matches_threads(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    save_torch_state_dict(_state_dict(), str(src), max_shard_size=600_000)
    index = next(src.glob("*.index.json"))
    assert len(list(src.glob("*.safetensors"))) >= 2
    _cast_with(index, tmp_path / "t", DTYPES["F16"], 0)
    _cast_with(index, tmp_path / "p", DTYPES["F16"], 2)
    names = sorted(os.listdir(tmp_path / "t"))
    assert names == sorted(os.listdir(tmp_path / "p"))
    for name in names:
        assert (tmp_path / "p" / name).read_bytes() == (tmp_path / "t" / name).read_bytes()


def _started(path, out, processes=2):
    """A cast job run until its worker processes are casting."""
    ckpt = open_checkpoint(path)
    job = cast_checkpoint(ckpt, DTYPES["F16"], str(out), chunk_bytes=CHUNK, processes=processes)
    for _ in range(12):
        assert isinstance(next(job), Progress)
    return ckpt, job


def test_workers_run_during_the_cast_and_are_gone_after(tmp_path):
    save_file(_state_dict(), tmp_path / "m.safetensors")
    ckpt, job = _started(tmp_path / "m.safetensors", tmp_path / "o.safetensors")
    with ckpt:
        assert len(multiprocessing.active_children()) == 2
        run_job(job)
    assert multiprocessing.active_children() == []


def test_a_cancel_leaves_no_output_no_temp_and_no_worker(tmp_path):
    save_file(_state_dict(), tmp_path / "m.safetensors")
    (tmp_path / "o.safetensors").write_bytes(b"the old file")
    ckpt, job = _started(tmp_path / "m.safetensors", tmp_path / "o.safetensors")
    with ckpt:
        job.close()  # what Cancel does
    assert multiprocessing.active_children() == []
    assert (tmp_path / "o.safetensors").read_bytes() == b"the old file"
    assert _leftovers(tmp_path) == []


def test_a_killed_worker_is_one_clear_error_and_nothing_is_written(tmp_path):
    save_file(_state_dict(), tmp_path / "m.safetensors")
    ckpt, job = _started(tmp_path / "m.safetensors", tmp_path / "o.safetensors")
    with ckpt, pytest.raises(CheckpointError) as e:
        victim, other = multiprocessing.active_children()
        os.kill(victim.pid, signal.SIGKILL)
        # the pool stops the other worker once it knows: wait for that before the job goes on
        # (on the exit pipe: the pool's thread reaps the process, a join here would race it)
        assert multiprocessing.connection.wait([other.sentinel], timeout=30)
        run_job(job)
    assert e.value.reason == "a cast worker process stopped unexpectedly (out of memory?)"
    assert not (tmp_path / "o.safetensors").exists() and _leftovers(tmp_path) == []
    assert multiprocessing.active_children() == []


def test_every_chunk_after_a_worker_died_is_the_same_clear_error(tmp_path):
    """The pool marks itself broken before it fails the waiting chunks: from then on queueing
    a chunk raises at once, and that too must be the one clear line (CI caught it raw)."""
    src, out = tmp_path / "in.bin", tmp_path / "out.bin"
    src.write_bytes(np.arange(64, dtype=np.float32).tobytes())
    out.write_bytes(bytes(128))
    caster = ChunkCaster(processes=1)
    with open(src, "rb") as fs, open(out, "r+b") as fo:
        task = RangeTask(
            FileId.of(str(src), fs.fileno()), 0, 256, "F32", "F16", False,
            FileId.of(str(out), fo.fileno()), 0,
        )  # fmt: skip
        try:
            caster.submit_range(task, 128, None)
            assert list(caster.ready(drain=True)) == [128]
            (worker,) = multiprocessing.active_children()
            os.kill(worker.pid, signal.SIGKILL)
            reasons = []
            for _ in range(2):
                with pytest.raises(CheckpointError) as e:
                    caster.submit_range(task, 128, None)
                    list(caster.ready(drain=True))
                reasons.append(e.value.reason)
        finally:
            caster.close()
    assert reasons == ["a cast worker process stopped unexpectedly (out of memory?)"] * 2
    assert multiprocessing.active_children() == []


def test_a_source_truncated_under_a_workers_map_is_named(tmp_path):
    """A worker reads its range through a map: a file truncated in place while it is mapped
    kills that worker with SIGBUS. The caller then finds the short file and says so, instead
    of blaming memory (the kill is sent by hand here: the real race is a millisecond wide)."""
    src, out = tmp_path / "in.bin", tmp_path / "out.bin"
    src.write_bytes(np.arange(1024, dtype=np.float32).tobytes())
    out.write_bytes(bytes(2048))
    caster = ChunkCaster(processes=1)
    with open(src, "rb") as fs, open(out, "r+b") as fo:
        source = FileId.of(str(src), fs.fileno(), name="/data/model.safetensors")
        task = RangeTask(source, 0, 4096, "F32", "F16", False, FileId.of(str(out), fo.fileno()), 0)
        try:
            caster.submit_range(task, 2048, None)
            assert list(caster.ready(drain=True)) == [2048]
            (worker,) = multiprocessing.active_children()
            os.truncate(src, 1000)
            os.kill(worker.pid, signal.SIGBUS)
            with pytest.raises(CheckpointError) as e:
                caster.submit_range(task, 2048, None)
                list(caster.ready(drain=True))
        finally:
            caster.close()
    assert (e.value.path, e.value.reason) == (
        "/data/model.safetensors",
        "file was truncated on disk while it was being cast",
    )


def test_a_worker_maps_only_its_range_and_leaves_the_source_as_it_was(tmp_path):
    """Ranges at unaligned offsets, mapped from the page boundary below them."""
    values = np.random.default_rng(3).standard_normal(50_000).astype(np.float32)
    src, out = tmp_path / "in.bin", tmp_path / "out.bin"
    src.write_bytes(b"\0" * 12 + values.tobytes())
    before = src.read_bytes()
    out.write_bytes(bytes(values.size * 2))
    with open(src, "rb") as fs, open(out, "r+b") as fo:
        for first, count in ((0, 1), (1, 1020), (1021, 3075), (4096, 45_903), (49_999, 1)):
            task = RangeTask(
                FileId.of(str(src), fs.fileno()), 12 + first * 4, count * 4, "F32", "F16", True,
                FileId.of(str(out), fo.fileno()), first * 2,
            )  # fmt: skip
            part = cast_range(task)
            assert part is not None and part.count == count
    assert np.array_equal(
        np.frombuffer(out.read_bytes(), np.uint16),
        torch.from_numpy(values).to(torch.float16).view(torch.int16).numpy().view(np.uint16),
    )
    assert src.read_bytes() == before


def test_a_source_replaced_before_the_workers_open_it_is_refused(tmp_path):
    src = tmp_path / "m.safetensors"
    save_file(_state_dict(), src)
    with open_checkpoint(src) as ckpt:
        job = cast_checkpoint(ckpt, DTYPES["F16"], str(tmp_path / "o.safetensors"), processes=2)
        next(job)  # the source is open here; no worker has opened it yet
        save_file({k: v * 2 for k, v in _state_dict().items()}, tmp_path / "new.safetensors")
        os.replace(tmp_path / "new.safetensors", src)
        with pytest.raises(CheckpointError) as e:
            run_job(job)
    assert (e.value.path, e.value.reason) == (
        str(src),
        "file was replaced on disk while it was being cast",
    )
    assert not (tmp_path / "o.safetensors").exists() and _leftovers(tmp_path) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="Linux /dev/full")
def test_a_full_disk_in_a_worker_names_the_destination(tmp_path):
    src = tmp_path / "m.safetensors"
    save_file({"w": torch.ones(1000)}, src)
    with open(src, "rb") as fs, open("/dev/full", "wb") as full:
        task = RangeTask(
            FileId.of(str(src), fs.fileno()),
            fs.seek(0, 2) - 4000,
            4000,
            "F32",
            "F16",
            True,
            FileId.of("/dev/full", full.fileno(), name="/data/model.safetensors"),
            0,
        )
        with pytest.raises(CheckpointError) as e:
            cast_range(task)
    assert (e.value.path, e.value.reason) == (
        "/data/model.safetensors",
        "cannot write: no space left on the disk",
    )


def test_a_truncated_source_is_named_by_the_worker(tmp_path):
    src = tmp_path / "m.safetensors"
    src.write_bytes(np.ones(10, np.float32).tobytes())
    out = tmp_path / "out.bin"
    out.write_bytes(b"")
    with open(src, "rb") as fs, open(out, "r+b") as fo:
        task = RangeTask(
            FileId.of(str(src), fs.fileno()), 0, 80, "F32", "F16", False,
            FileId.of(str(out), fo.fileno()), 0,
        )  # fmt: skip
        with pytest.raises(CheckpointError, match="truncated while reading"):
            cast_range(task)


def test_the_worker_count_follows_the_work_and_the_environment(tmp_path, monkeypatch):
    save_file({"w": torch.ones(1000)}, tmp_path / "m.safetensors")
    with open_checkpoint(tmp_path / "m.safetensors") as ckpt:
        plan = plan_cast(ckpt, DTYPES["F16"])
        monkeypatch.delenv(PROCESSES_ENV, raising=False)
        assert cast_processes(plan) == 0  # 4 KB: threads start faster
        monkeypatch.setenv(PROCESSES_ENV, "3")
        assert cast_processes(plan) == 3
        monkeypatch.setenv(PROCESSES_ENV, "many")
        with pytest.raises(CheckpointError, match="must be a whole number"):
            cast_processes(plan)


def test_a_library_script_without_a_main_guard_runs_once(tmp_path):
    """A spawned worker imports its parent's main script: without the ``__main__`` guard the
    script's top level would run again in every worker (then fail as 'stopped unexpectedly').
    Only programs that opted in start workers on their own; a library call stays in threads."""
    save_file(_state_dict(), tmp_path / "m.safetensors")
    script = tmp_path / "convert.py"
    script.write_text(
        "from inspector.core.cast import worker_policy\n"
        "from inspector.core.opening import open_checkpoint\n"
        "from inspector.core.cast.job import cast_checkpoint\n"
        "from inspector.core.dtypes import DTYPES\n"
        "from inspector.core.progress import run_job\n"
        "with open('runs.log', 'a') as log:\n"
        "    log.write('ran\\n')\n"
        "worker_policy.PROCESS_MIN_BYTES = 0  # any cast is large enough\n"
        "with open_checkpoint('m.safetensors') as ckpt:\n"
        "    run_job(cast_checkpoint(ckpt, DTYPES['F16'], 'o.safetensors'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != PROCESSES_ENV}
    p = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, env=env,
        timeout=120,
    )  # fmt: skip
    assert (p.returncode, p.stderr) == (0, "")
    assert (tmp_path / "runs.log").read_text() == "ran\n"
    assert (tmp_path / "o.safetensors").exists()


def test_programs_that_opted_in_start_workers_for_large_casts(tmp_path, monkeypatch):
    save_file({"w": torch.ones(1000)}, tmp_path / "m.safetensors")
    monkeypatch.delenv(PROCESSES_ENV, raising=False)
    monkeypatch.setattr(worker_policy, "PROCESS_MIN_BYTES", 4000)
    cores = usable_cores()
    with open_checkpoint(tmp_path / "m.safetensors") as ckpt:
        plan = plan_cast(ckpt, DTYPES["F16"])
        assert cast_processes(plan) == 0  # pytest is a library caller: threads
        try:
            worker_policy.allow_worker_processes()
            assert cast_processes(plan) == (
                min(cores, worker_policy.MAX_PROCESSES) if cores > 1 else 0
            )
            monkeypatch.setenv(PROCESSES_ENV, "0")
            assert cast_processes(plan) == 0
        finally:
            worker_policy.allow_worker_processes(False)


def test_a_worker_survives_the_ctrl_c_its_caller_handles():
    """Ctrl-C reaches the whole process group; a worker that died of it would print a
    traceback and break the pool before the caller's own clean exit."""
    code = (
        "import os, signal\n"
        "from inspector.core.cast.worker_boot import boot_worker\n"
        "boot_worker()\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "print('alive')\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (0, "alive\n", "")


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_workers_survive_a_ctrl_c_pressed_while_they_start(capfd):
    """A worker starts Python and unpickles its first call for ~0.1 s before boot_worker
    ignores Ctrl-C; a Ctrl-C then (the first moments of a `cast`) killed each worker with a
    KeyboardInterrupt traceback on the user's terminal. They start with SIGINT held now."""
    before = set(multiprocessing.active_children())
    pool = start_processes(2)
    try:
        workers = [p for p in multiprocessing.active_children() if p not in before]
        assert len(workers) == 2
        for p in workers:  # at once: neither has reached boot_worker yet
            os.kill(p.pid, signal.SIGINT)
        pids = {pool.submit(os.getpid).result(timeout=60) for _ in range(8)}
    finally:
        pool.shutdown(wait=True)
    assert pids <= {p.pid for p in workers}
    assert "Traceback" not in capfd.readouterr().err


def test_a_second_ctrl_c_while_the_workers_stop_neither_hangs_nor_leaves_one(tmp_path):
    """Ctrl-C, then Ctrl-C again while the cast stopped its workers: the second one interrupted
    the pool's shutdown, and the program then waited forever at exit for workers that never
    got their stop message. Now the stop finishes first and the Ctrl-C is raised after it."""
    script = tmp_path / "second_ctrl_c.py"
    script.write_text(
        "import multiprocessing, os, signal, threading, time\n"
        "from inspector.core.cast.worker_boot import spawn_workers, stop_workers\n"
        "if __name__ == '__main__':\n"
        "    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started ignored\n"
        "    pool = spawn_workers(2)\n"
        "    busy = [pool.submit(time.sleep, 0.5) for _ in range(6)]\n"
        "    time.sleep(0.3)  # both workers are in their first task\n"
        "    threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGINT)).start()\n"
        "    try:\n"
        "        stop_workers(pool)\n"
        "    except KeyboardInterrupt:\n"
        "        print('interrupted after the stop', multiprocessing.active_children())\n"
    )
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    p = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60
    )  # a hang fails here, as a timeout
    assert (p.returncode, p.stdout, p.stderr) == (0, "interrupted after the stop []\n", "")


@pytest.mark.skipif(
    not os.path.isdir("/proc/self/task") or usable_cores() < 2, reason="Linux /proc, 2+ cores"
)
def test_workers_load_numpy_without_spinning_blas_threads(monkeypatch):
    """numpy's OpenBLAS starts a thread per extra core when it loads, which spins before it
    sleeps: in every worker that was CPU taken from the cast. A worker runs one thread."""
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    probe = (
        "'numpy' in __import__('sys').modules, __import__('os').listdir('/proc/self/task'), "
        "[t.name for t in __import__('threading').enumerate()]"
    )
    with start_processes(1) as pool:
        numpy_loaded, threads, python_threads = pool.submit(eval, probe).result(timeout=60)
    # the OS threads are Python's own: the main one and the parent watch, no BLAS thread
    assert numpy_loaded and len(threads) == len(python_threads), (threads, python_threads)
    assert sorted(python_threads) == ["MainThread", "parent-watch"]


def test_the_cli_with_processes_forced_writes_what_threads_write(tmp_path):
    save_file(_state_dict(), tmp_path / "m.safetensors")
    outs = {}
    for n in ("0", "2"):
        out, report = tmp_path / f"o{n}.safetensors", tmp_path / f"r{n}.json"
        env = dict(os.environ, **{PROCESSES_ENV: n})
        p = subprocess.run(
            [sys.executable, "-m", "inspector", "cast", str(tmp_path / "m.safetensors"),
             "--target", "F8_E4M3", "-o", str(out), "--report", str(report)],
            capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
        assert p.returncode == 0 and p.stderr == "", p.stderr
        outs[n] = (
            out.read_bytes(),
            report.read_text(),
            p.stdout.replace(f"o{n}.", "o.").replace(f"r{n}.", "r."),
        )
    assert outs["2"] == outs["0"]


@pytest.mark.needs("fchmod")
def test_a_read_only_source_is_cast_by_workers_and_its_mode_kept(tmp_path):
    """The temp took a 0444 source's mode at once, so a worker (a process of its own, not
    root) could not open it for writing; the owner keeps write permission until the commit."""
    import stat

    src = tmp_path / "m.safetensors"
    save_file(_state_dict(), src)
    src.chmod(0o444)
    out = tmp_path / "o.safetensors"
    ckpt, job = _started(src, out)
    with ckpt:
        (temp,) = [n for n in os.listdir(tmp_path) if n.endswith(".partial")]
        assert stat.S_IMODE(os.stat(tmp_path / temp).st_mode) & 0o200  # writable while written
        run_job(job)
    assert stat.S_IMODE(out.stat().st_mode) == 0o444


def test_a_pickles_strided_views_cast_by_processes_are_torchs(tmp_path):
    """A pickle's non-contiguous views (a transpose, a column slice) are gathered in this
    process, never sent to a worker as a plain byte range: with workers forced, the narrowed
    values are still torch's (a mutation that sent them over went unnoticed before)."""
    g = torch.Generator().manual_seed(11)
    base = torch.randn(512, 384, generator=g)
    state = {"t": base.t(), "cols": base[:, ::3], "plain": torch.randn(70_000, generator=g)}
    torch.save(state, tmp_path / "m.pt")
    out = tmp_path / "o.safetensors"
    _cast_with(tmp_path / "m.pt", out, DTYPES["F16"], 2)
    from safetensors.torch import load_file

    got = load_file(out)
    for name, want in state.items():
        assert torch.equal(got[name], want.to(torch.float16)), name
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("target", ["F4", "F6_E2M3"])
def test_a_cast_into_a_packed_type_with_processes_is_the_threads_cast(tmp_path, target):
    """Packed targets (two F4 or four F6 values to bytes that do not split at a chunk's edge)
    are cast in this process even when workers run: the same bytes and report as threads."""
    save_file(_state_dict(), tmp_path / "m.safetensors")
    by_threads = _cast_with(tmp_path / "m.safetensors", tmp_path / "t.st", DTYPES[target], 0)
    by_processes = _cast_with(tmp_path / "m.safetensors", tmp_path / "p.st", DTYPES[target], 2)
    assert (tmp_path / "p.st").read_bytes() == (tmp_path / "t.st").read_bytes()
    assert by_processes.to_json_text() == by_threads.to_json_text()


def _file_size_limit() -> None:  # a child's files may not grow past 1 MiB (no SIGXFSZ)
    import resource

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="POSIX file size limit")
def test_a_write_a_worker_cannot_make_names_the_output_not_its_temp(tmp_path):
    """A worker writes into the save's temp file; when that fails (a full disk, a file size
    limit) the one line names the file the user asked for, never the hidden temp."""
    src, out = tmp_path / "m.safetensors", tmp_path / "o.safetensors"
    save_file({"w": torch.randn(1 << 20)}, src)  # 4 MiB of F32: 2 MiB of F16, past the limit
    env = dict(os.environ, PYTHONPATH=os.getcwd(), **{PROCESSES_ENV: "2"})
    run = subprocess.run(
        [sys.executable, "-m", "inspector", "cast", str(src), "--target", "F16", "-o", str(out)],
        env=env, capture_output=True, text=True, preexec_fn=_file_size_limit,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr == (
        f"checkpoint-inspector: error: {out}: cannot write: the file would be larger than this "
        "file system or a limit allows\n"
    )
    assert ".partial" not in run.stderr and len(run.stderr.splitlines()) == 1
    assert sorted(os.listdir(tmp_path)) == ["m.safetensors"]


def test_a_range_cast_without_a_report_returns_no_measurement(tmp_path):
    """``report=False`` (a cast without ``--report``) measures nothing: no accumulator is made
    and None comes back; the bytes written are the same."""
    values = np.linspace(-3, 3, 1000, dtype=np.float32)
    src, out = tmp_path / "in.bin", tmp_path / "out.bin"
    src.write_bytes(values.tobytes())
    out.write_bytes(bytes(values.size * 2))
    with open(src, "rb") as fs, open(out, "r+b") as fo:
        task = RangeTask(
            FileId.of(str(src), fs.fileno()), 0, values.nbytes, "F32", "F16", False,
            FileId.of(str(out), fo.fileno()), 0,
        )  # fmt: skip
        assert cast_range(task) is None
    assert out.read_bytes() == values.astype(np.float16).tobytes()


def test_a_refused_replaced_source_leaves_the_other_descriptors_of_the_worker_alone(tmp_path):
    """After a source found replaced, the worker holds no descriptor: the next task opens its
    own file and closes nothing else (standard output, here fd 1, stays what it was)."""
    values = np.arange(16, dtype=np.float32)
    old, new, good, out = (tmp_path / n for n in ("old.bin", "new.bin", "good.bin", "out.bin"))
    for p in (old, new, good):
        p.write_bytes(values.tobytes())
    out.write_bytes(bytes(values.size * 2))
    before = os.fstat(1)
    saved = os.dup(1)
    try:
        with open(old, "rb") as fs, open(good, "rb") as fg, open(out, "r+b") as fo:
            output = FileId.of(str(out), fo.fileno())
            stale = FileId.of(str(old), fs.fileno())
            os.replace(new, old)  # the worker now finds another file under the name
            with pytest.raises(CheckpointError, match="replaced on disk"):
                cast_range(RangeTask(stale, 0, 64, "F32", "F16", False, output, 0))
            cast_range(
                RangeTask(FileId.of(str(good), fg.fileno()), 0, 64, "F32", "F16", False, output, 0)
            )
        after = os.fstat(1)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)
    assert out.read_bytes() == values.astype(np.float16).tobytes()
