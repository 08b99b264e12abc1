"""Saving under faults: disk full, read-only or missing folder, output == input, cancel, SIGKILL.

After each: the source is byte-identical, the destination is absent (or still the complete file
it was before), and no ``.*.partial`` temp is left, except after SIGKILL, where the next save to
that folder removes it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.save import writer as writer_mod

F16 = DTYPES["F16"]
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _tensors(n: int = 4, size: int = 128 * 1024) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    out = {f"w{i}": torch.randn(size, generator=g) for i in range(n)}
    out["ids"] = torch.arange(7, dtype=torch.int64)
    return out


@pytest.fixture
def source(tmp_path) -> Path:
    """~2 MB of F32 in five tensors, written by safetensors itself."""
    p = tmp_path / "src" / "model.safetensors"
    p.parent.mkdir()
    save_file(_tensors(), str(p), metadata={"format": "pt"})
    return p


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def partials(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith(".") and n.endswith(".partial"))


def cast(src: Path, out: Path):
    with open_checkpoint(src) as ckpt:
        return run_job(cast_checkpoint(ckpt, F16, str(out)))


def assert_complete_cast_of(dest: Path, src: Path) -> None:
    """dest loads with safe_open and holds exactly torch's F16 cast of every float tensor."""
    with safe_open(str(src), "pt") as a, safe_open(str(dest), "pt") as b:
        assert list(b.keys()) == list(a.keys())
        assert b.metadata() == a.metadata()
        for k in a.keys():  # noqa: SIM118 - safe_open is not iterable
            x = a.get_tensor(k)
            want = x.to(torch.float16) if x.is_floating_point() else x
            got = b.get_tensor(k)
            assert got.dtype == want.dtype
            assert torch.equal(got, want)


def assert_nothing_lost(src: Path, before: str, dest: Path, old: bytes | None = None) -> None:
    assert digest(src) == before, "the source changed"
    if old is None:
        assert not dest.exists(), "a destination appeared"
    else:
        assert dest.read_bytes() == old, "the old destination changed"
    if dest.parent.exists():
        assert partials(dest.parent) == []


# -- fixtures for hostile folders ------------------------------------------------------------


@contextlib.contextmanager
def tmpfs(folder: Path, options: str):
    """Mount a small tmpfs (root only); yields False when mounting is not possible here."""
    folder.mkdir(parents=True, exist_ok=True)
    if not IS_ROOT or shutil.which("mount") is None:
        yield False
        return
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True
    )
    if r.returncode != 0:
        yield False
        return
    try:
        yield True
    finally:
        if subprocess.run(["umount", str(folder)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def _fail_writes_into(monkeypatch, folder: Path, err: int, after_bytes: int = 0) -> None:
    """Simulate a full or read-only disk: creating a file in ``folder`` fails with ``err`` for
    EROFS/EACCES; for ENOSPC, writes to files created there fail once ``after_bytes`` went in.
    Descriptors are tracked as they are opened, so this needs no /proc (works on macOS too)."""
    real_write, real_open, real_close = os.write, os.open, os.close
    prefix = str(folder.resolve()) + os.sep
    tracked: set[int] = set()
    written = {"n": 0}

    def fake_open(path, flags, *args, **kwargs):
        inside = os.path.abspath(os.fspath(path)).startswith(prefix)
        if inside and flags & os.O_CREAT and err != errno.ENOSPC:
            raise OSError(err, os.strerror(err), os.fspath(path))
        fd = real_open(path, flags, *args, **kwargs)
        if inside:
            tracked.add(fd)
        return fd

    def fake_close(fd):
        tracked.discard(fd)
        return real_close(fd)

    def fake_write(fd, data):
        if fd not in tracked:
            return real_write(fd, data)
        room = after_bytes - written["n"]
        if room <= 0:
            raise OSError(err, os.strerror(err))
        n = real_write(fd, memoryview(data)[:room])
        written["n"] += n
        return n

    monkeypatch.setattr(writer_mod.os, "open", fake_open)
    monkeypatch.setattr(writer_mod.os, "close", fake_close)
    monkeypatch.setattr(writer_mod.os, "write", fake_write)


# -- disk full --------------------------------------------------------------------------------


def test_disk_full_real_tmpfs(source, tmp_path):
    before = digest(source)
    out_dir = tmp_path / "small"
    with tmpfs(out_dir, "size=1m") as mounted:
        if not mounted:
            pytest.skip("needs root and mount for a real 1 MB tmpfs (simulated test below)")
        dest = out_dir / "out.safetensors"
        with pytest.raises(CheckpointError) as err:
            cast(source, dest)
        assert err.value.path == str(dest)
        assert "no space left on the disk" in err.value.reason
        assert_nothing_lost(source, before, dest)
        assert os.listdir(out_dir) == []


@pytest.mark.parametrize("after_bytes", [0, 100_000])
def test_disk_full_simulated(source, tmp_path, monkeypatch, after_bytes):
    before = digest(source)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    dest = out_dir / "out.safetensors"
    _fail_writes_into(monkeypatch, out_dir, errno.ENOSPC, after_bytes)
    with pytest.raises(CheckpointError) as err:
        cast(source, dest)
    assert err.value.reason == "cannot write: no space left on the disk"
    assert_nothing_lost(source, before, dest)


def test_disk_full_keeps_the_old_destination(source, tmp_path, monkeypatch):
    """Overwriting an existing output: it stays the complete old file when the new one fails."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    dest = out_dir / "out.safetensors"
    cast(source, dest)
    old = dest.read_bytes()
    before = digest(source)
    _fail_writes_into(monkeypatch, out_dir, errno.ENOSPC, 50_000)
    with pytest.raises(CheckpointError, match="no space left"):
        cast(source, dest)
    assert_nothing_lost(source, before, dest, old=old)
    assert_complete_cast_of(dest, source)


# -- folders ----------------------------------------------------------------------------------


def test_read_only_folder(source, tmp_path, monkeypatch):
    before = digest(source)
    out_dir = tmp_path / "ro"
    with tmpfs(out_dir, "ro,size=1m") as mounted:
        if not mounted:
            if IS_ROOT:  # root writes through mode bits: simulate the refusal
                _fail_writes_into(monkeypatch, out_dir, errno.EROFS)
            else:
                out_dir.chmod(0o555)
        dest = out_dir / "out.safetensors"
        try:
            with pytest.raises(CheckpointError) as err:
                cast(source, dest)
        finally:
            if not mounted and not IS_ROOT:
                out_dir.chmod(0o755)
        assert err.value.path == str(dest)
        assert err.value.reason in (
            f"cannot write to folder {out_dir}: the disk is read-only",
            f"cannot write to folder {out_dir}: permission denied",
        )
        assert_nothing_lost(source, before, dest)


def test_output_folder_missing(source, tmp_path):
    before = digest(source)
    dest = tmp_path / "no" / "such" / "out.safetensors"
    with pytest.raises(CheckpointError) as err:
        cast(source, dest)
    assert err.value.path == str(dest)
    assert "does not exist" in err.value.reason
    assert not (tmp_path / "no").exists()
    assert digest(source) == before


@pytest.mark.parametrize("spelling", ["same", "dotdot", "symlink", "hardlink"])
def test_output_is_the_input(source, tmp_path, spelling):
    before = digest(source)
    if spelling == "same":
        dest = source
    elif spelling == "dotdot":
        dest = source.parent / ".." / source.parent.name / source.name
    elif spelling == "symlink":
        dest = tmp_path / "link.safetensors"
        dest.symlink_to(source)
    else:
        dest = tmp_path / "hard.safetensors"
        os.link(source, dest)
    with pytest.raises(CheckpointError) as err:
        cast(source, dest)
    assert "is the input file" in err.value.reason
    assert digest(source) == before
    assert partials(source.parent) == [] and partials(tmp_path) == []


# -- cancel ---------------------------------------------------------------------------------


@pytest.mark.parametrize("steps", [1, 3, 6])
def test_cancel_mid_save(source, tmp_path, steps):
    before = digest(source)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    dest = out_dir / "out.safetensors"
    with open_checkpoint(source) as ckpt:
        job = cast_checkpoint(ckpt, F16, str(dest))
        for _ in range(steps):
            p = next(job)
            assert 0 <= p.done <= p.total == ckpt.total_nbytes
        job.close()  # what the GUI's Cancel does
    assert_nothing_lost(source, before, dest)


def test_cancel_keeps_the_old_destination(source, tmp_path):
    dest = tmp_path / "out.safetensors"
    cast(source, dest)
    old = dest.read_bytes()
    with open_checkpoint(source) as ckpt:
        job = cast_checkpoint(ckpt, F16, str(dest))
        next(job), next(job)
        job.close()
    assert_nothing_lost(source, digest(source), dest, old=old)


def test_cancel_sharded_save_leaves_no_folder(tmp_path):
    from huggingface_hub import save_torch_state_dict

    src = tmp_path / "sharded"
    src.mkdir()
    save_torch_state_dict(_tensors(), src, max_shard_size=600_000)
    before = {p.name: digest(p) for p in src.iterdir()}
    out = tmp_path / "out"
    with open_checkpoint(src) as ckpt:
        assert ckpt.is_sharded
        job = cast_checkpoint(ckpt, F16, str(out))
        for _ in range(4):
            next(job)
        job.close()
    assert not out.exists()
    assert {p.name: digest(p) for p in src.iterdir()} == before


@pytest.mark.needs("flock")
def test_a_save_in_progress_is_never_cleaned(source, tmp_path):
    """Another save's locked temp in the same folder survives our save's leftover cleanup."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    busy = out_dir / ".other.safetensors.0123456789ab.partial"
    stale = out_dir / ".old.safetensors.ba9876543210.partial"
    stale.write_bytes(b"half a file")
    fd = os.open(busy, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        cast(source, out_dir / "out.safetensors")
        assert partials(out_dir) == [busy.name]  # the stale one went, the locked one stayed
    finally:
        os.close(fd)
    assert_complete_cast_of(out_dir / "out.safetensors", source)


# -- SIGKILL ----------------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX only")
@pytest.mark.needs("flock")
def test_sigkill_mid_save_then_next_save_cleans_up(tmp_path):
    src = tmp_path / "big.safetensors"
    save_file({"w": torch.ones(50_000_000)}, str(src))  # 200 MB of F32
    before = digest(src)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    dest = out_dir / "big-f16.safetensors"
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector", "cast", str(src), "--target", "F16", "-o", str(dest)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120  # a bound on a hang, not a speed requirement
        while not any(os.path.getsize(out_dir / n) > 0 for n in partials(out_dir)):
            assert proc.poll() is None, "the cast finished before it could be killed"
            assert time.monotonic() < deadline, "no .partial appeared"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert digest(src) == before
    assert not dest.exists()
    left = partials(out_dir)
    assert len(left) == 1 and left[0].startswith(f".{dest.name}.")
    # the next save to that folder removes the dead save's temp
    small = tmp_path / "small.safetensors"
    save_file({"x": torch.arange(4, dtype=torch.float32)}, str(small))
    cast(small, out_dir / "small-f16.safetensors")
    assert partials(out_dir) == []
    assert sorted(os.listdir(out_dir)) == ["small-f16.safetensors"]
    assert_complete_cast_of(out_dir / "small-f16.safetensors", small)


def test_successful_cast_is_complete_and_clean(source, tmp_path):
    """The baseline the fault tests compare against."""
    dest = tmp_path / "out.safetensors"
    before = digest(source)
    report = cast(source, dest)
    assert digest(source) == before
    assert partials(tmp_path) == []
    assert_complete_cast_of(dest, source)
    assert {t.name for t in report.tensors} >= {"w0", "w1", "w2", "w3"}
    np.testing.assert_array_equal(open_checkpoint(dest).view("ids"), np.arange(7, dtype=np.int64))


def test_folder_without_file_locks(source, tmp_path, monkeypatch):
    """A folder whose filesystem refuses flock (some NFS/SMB mounts): the save still completes
    (unlocked) or fails clearly, and no temp is left either way."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    dest = out_dir / "out.safetensors"
    before = digest(source)

    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", no_locks)
    with contextlib.suppress(CheckpointError):
        cast(source, dest)  # saving without the lock would also be acceptable
    assert digest(source) == before
    if dest.exists():
        assert_complete_cast_of(dest, source)
    assert partials(out_dir) == []
