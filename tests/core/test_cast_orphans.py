"""A killed cast leaves no process behind: ``kill -9`` of the program (the OOM killer, a closed
terminal) mid-cast left its worker processes alive for good, holding the source and the
``.partial`` open and the terminal's pipe (a ``… | tail`` never ended). Workers now end with
their parent, and the next save into the folder removes the dead cast's temp."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inspector.core.cast.worker_policy import PROCESSES_ENV

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

NBYTES = 1 << 30  # a cast of a second or more on two workers


def _sparse_f32(path: Path) -> None:
    """A valid safetensors file of NBYTES of zeros, written sparse (instant)."""
    n = NBYTES // 4
    header = json.dumps({"w": {"dtype": "F32", "shape": [n], "data_offsets": [0, NBYTES]}})
    header += " " * (-len(header) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header.encode())
        f.truncate(8 + len(header) + NBYTES)


def _children(pid: int) -> set[int]:
    """Every descendant of ``pid`` now (a walk of /proc's parent links)."""
    parent_of = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            parent_of[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        for child, parent in parent_of.items():
            if parent == p and child not in found:
                found.add(child)
                todo.append(child)
    return found


def kill_and_wait_for(proc: subprocess.Popen, tree: set[int]) -> None:
    """SIGKILL ``proc``, then assert every process of ``tree`` is gone within 5 s."""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while _alive(tree) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(tree), f"still running 5 s after the kill: {_alive(tree)}"


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.add(pid)
        except OSError:
            pass
    return alive


def _holders(path_part: str, pids: set[int]) -> set[int]:
    held = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if path_part in os.readlink(f"/proc/{pid}/fd/{fd}"):
                    held.add(pid)
        except OSError:
            pass
    return held


@pytest.mark.parametrize("after", [0.3, 0.7, 1.2])
def test_sigkill_of_a_cast_leaves_no_process_and_no_temp(tmp_path, after):
    src, out_dir = tmp_path / "src.safetensors", tmp_path / "out"
    out_dir.mkdir()
    _sparse_f32(src)
    env = dict(os.environ, PYTHONPATH=os.getcwd(), **{PROCESSES_ENV: "2"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector", "cast", str(src), "--target", "F16", "-o",
         str(out_dir / "o.safetensors")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    tree: set[int] = set()
    deadline = time.monotonic() + after
    while time.monotonic() < deadline and proc.poll() is None:
        tree |= _children(proc.pid)  # the workers (and the resource tracker) as they start
        time.sleep(0.02)
    if proc.poll() is not None:
        pytest.skip("the cast ended before the kill")
    tree |= _children(proc.pid)
    kill_and_wait_for(proc, tree)
    assert not _holders(str(out_dir), tree)
    proc.stdout.read()  # the pipe closes: no survivor holds its write end
    # the tracker removes the dead cast's semaphores without a Python warning on the terminal
    assert proc.stderr.read().decode() == ""
    # the next save into the folder removes the dead cast's temp (its lock went with it)
    small = tmp_path / "small.safetensors"
    import numpy as np

    from inspector.core.dtypes import DTYPES
    from inspector.core.save.writer import save_arrays

    save_arrays(small, [("x", DTYPES["F32"], np.ones(2, np.float32))])
    subprocess.run(
        [sys.executable, "-m", "inspector", "cast", str(small), "--target", "F16", "-o",
         str(out_dir / "small.safetensors")],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    assert sorted(os.listdir(out_dir)) == ["small.safetensors"]
