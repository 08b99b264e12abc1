"""Cast workers started early: the program spawns them while it still loads numpy, and the cast
takes them; workers no cast takes are stopped, never left behind."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from safetensors.numpy import save_file

from inspector.core.cast.pool import start_processes
from inspector.core.cast.worker_boot import drop_early_workers, start_workers_early
from inspector.core.cast.worker_policy import PROCESSES_ENV, bytes_on_disk, processes_supported

pytestmark = pytest.mark.skipif(not processes_supported(), reason="POSIX pwrite")


def _early_worker() -> multiprocessing.Process:
    (worker,) = multiprocessing.active_children()
    return worker


def _exits(worker: multiprocessing.Process) -> bool:
    return bool(multiprocessing.connection.wait([worker.sentinel], timeout=60))


def test_a_cast_of_the_same_count_takes_the_early_workers():
    start_workers_early(1)
    early = _early_worker()
    with start_processes(1) as pool:
        assert pool.submit(os.getpid).result(timeout=60) == early.pid
    assert _exits(early)


def test_early_workers_of_another_count_are_stopped():
    start_workers_early(1)
    early = _early_worker()
    with start_processes(2) as pool:
        assert early.pid not in {pool.submit(os.getpid).result(timeout=60) for _ in range(4)}
        assert _exits(early)


def test_early_workers_no_cast_took_are_stopped():
    start_workers_early(1)
    early = _early_worker()
    drop_early_workers()
    assert _exits(early)
    drop_early_workers()  # nothing left: a no-op


def test_the_cli_starts_the_workers_before_it_loads_numpy(tmp_path):
    """Parsing `cast … --target` must not load numpy, or the workers would start after it."""
    save_file({"w": np.ones(100, np.float32)}, str(tmp_path / "m.safetensors"))
    probe = textwrap.dedent(
        """
        import sys
        from inspector.core.cast import worker_boot
        from inspector.cli.dispatch import console_main
        started = worker_boot.start_workers_early
        def spy(n):
            print("numpy loaded" if "numpy" in sys.modules else "numpy not loaded", n)
            started(n)
        worker_boot.start_workers_early = spy
        if __name__ == "__main__":
            sys.exit(console_main())
        """
    )
    (tmp_path / "probe.py").write_text(probe)
    p = subprocess.run(
        [sys.executable, str(tmp_path / "probe.py"), "cast", str(tmp_path / "m.safetensors"),
         "--target", "F16", "-o", str(tmp_path / "o.safetensors")],
        capture_output=True, text=True, env=dict(os.environ, **{PROCESSES_ENV: "2"}), timeout=120,
    )  # fmt: skip
    assert (p.returncode, p.stderr) == (0, "")
    assert p.stdout.splitlines()[0] == "numpy not loaded 2"


def _live_workers(session: int) -> list[int]:
    """Cast workers of ``session`` still running (a zombie has exited; /proc on Linux)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if int(fields[3]) == session and fields[0] != "Z" and b"spawn_main" in cmdline:
            pids.append(int(pid))
    return pids


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux /proc")
def test_a_cast_with_nothing_to_narrow_leaves_no_early_worker_behind(tmp_path):
    """Workers are forced (so started early) but the F32 file cast to F32 needs none: they
    are stopped before the program exits, not orphaned."""
    save_file({"w": np.ones(100, np.float32)}, str(tmp_path / "m.safetensors"))
    p = subprocess.Popen(
        [sys.executable, "-m", "inspector", "cast", str(tmp_path / "m.safetensors"),
         "--target", "F32", "-o", str(tmp_path / "o.safetensors")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env=dict(os.environ, **{PROCESSES_ENV: "2"}),
    )  # fmt: skip
    _, err = p.communicate(timeout=120)
    assert (p.returncode, err) == (0, ""), err
    assert (tmp_path / "o.safetensors").exists()
    assert _live_workers(p.pid) == []


def test_the_size_estimate_covers_files_indexes_and_folders(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "a.safetensors").write_bytes(bytes(1000))
    (folder / "b.bin").write_bytes(bytes(500))
    (folder / "index.json").write_text("{}")
    (folder / "README.md").write_text("x" * 10_000)
    assert bytes_on_disk(str(folder / "a.safetensors")) == 1000
    assert bytes_on_disk(str(folder)) == 1500
    assert bytes_on_disk(str(folder / "index.json")) == 1500
    assert bytes_on_disk(str(tmp_path / "missing.safetensors")) == 0
