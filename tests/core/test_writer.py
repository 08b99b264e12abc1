"""The durable writer: reference-compatible headers, locked temps, leftovers cleaned, nothing lost."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import signal
import stat
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError, os_error_reason
from inspector.core.formats.safetensors import read_header
from inspector.core.save import writer as writer_mod
from inspector.core.save.pending_file import file_kind
from inspector.core.save.writer import (
    AtomicWriter,
    TensorEntry,
    clean_leftovers,
    encode_header,
    save_arrays,
    write_text_atomic,
)

from .ctrl_c import ctrl_c_on_first_call, sigint_raises


def partials(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".partial"))


def test_ctrl_c_during_the_renames_lets_the_commit_finish_first(tmp_path, monkeypatch):
    """A Ctrl-C landing between the renames of a commit (a shard published, the next not):
    the commit now completes, every file new, and the Ctrl-C is raised after it."""
    from inspector.core.save.pending_file import PendingFile

    publish_then_ctrl_c, pressed = ctrl_c_on_first_call(PendingFile.publish, after=True)
    monkeypatch.setattr(PendingFile, "publish", publish_then_ctrl_c)
    out = tmp_path / "model"
    w = AtomicWriter(root=str(out))
    with sigint_raises(), pytest.raises(KeyboardInterrupt), w:
        w.make_folder(str(out))
        for name in ("a", "b", "c"):
            w.open_safetensors(str(out / f"{name}.safetensors"), [], None)
        w.commit()
    assert pressed and w.committed
    assert sorted(os.listdir(out)) == ["a.safetensors", "b.safetensors", "c.safetensors"]


def test_ctrl_c_while_an_aborted_write_cleans_up_removes_every_temp(tmp_path, monkeypatch):
    """A Ctrl-C landing while a stopped cast removed its temp files (a user pressing it again)
    left the temps not yet removed; the clean-up now finishes, then the Ctrl-C is raised."""
    from inspector.core.save.pending_file import PendingFile

    discard_then_ctrl_c, pressed = ctrl_c_on_first_call(PendingFile.discard)  # mid-discard
    monkeypatch.setattr(PendingFile, "discard", discard_then_ctrl_c)
    with sigint_raises(), pytest.raises(KeyboardInterrupt), AtomicWriter() as w:
        for name in ("a", "b", "c"):
            w.open_safetensors(str(tmp_path / f"{name}.safetensors"), [], None)
        raise KeyboardInterrupt  # the first Ctrl-C: the write stops and cleans up
    assert pressed and partials(tmp_path) == [] and os.listdir(tmp_path) == []


def sample() -> list[tuple[str, object, np.ndarray]]:
    return [
        ("z.weight", DTYPES["F32"], np.arange(6, dtype=np.float32).reshape(2, 3)),
        ("a.ids", DTYPES["I64"], np.array([1, -2, 3], dtype=np.int64)),
        ("m.mask", DTYPES["BOOL"], np.array([True, False])),
        ("empty", DTYPES["F16"], np.zeros((0, 4), dtype=np.float16)),
    ]


def test_header_is_padded_like_the_reference_writer(tmp_path):
    entries = [TensorEntry("x", DTYPES["F32"], (3,))]
    head = encode_header(entries, {"format": "pt"})
    (n,) = struct.unpack("<Q", head[:8])
    assert n % 8 == 0 and len(head) == 8 + n
    text = head[8:].decode()
    assert text.rstrip(" ") == text.rstrip() and text.endswith(
        " " * (len(text) - len(text.rstrip()))
    )
    assert json.loads(text) == {
        "__metadata__": {"format": "pt"},
        "x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},
    }
    # the reference writer pads the same way for the same content
    save_file({"x": torch.zeros(3)}, str(tmp_path / "ref.safetensors"), metadata={"format": "pt"})
    ref = (tmp_path / "ref.safetensors").read_bytes()
    assert struct.unpack("<Q", ref[:8])[0] % 8 == 0


def test_save_keeps_order_metadata_and_loads_everywhere(tmp_path):
    path = str(tmp_path / "out.safetensors")
    save_arrays(path, sample(), {"format": "pt", "note": "kept"})
    h = read_header(path)
    assert [t.name for t in h.tensors] == ["z.weight", "a.ids", "m.mask", "empty"]
    assert h.metadata == {"format": "pt", "note": "kept"}
    loaded = load_file(path)
    assert loaded["z.weight"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert loaded["a.ids"].tolist() == [1, -2, 3]
    assert loaded["m.mask"].tolist() == [True, False]
    assert tuple(loaded["empty"].shape) == (0, 4)
    with safe_open(path, framework="np") as f:
        assert f.metadata() == {"format": "pt", "note": "kept"}
        assert list(f.keys()) == sorted(["z.weight", "a.ids", "m.mask", "empty"])
    assert partials(tmp_path) == []


@pytest.mark.needs("flock")
def test_temp_is_named_locked_and_in_the_target_folder(tmp_path):
    dest = str(tmp_path / "x.safetensors")
    with AtomicWriter() as w:
        f = w.open(dest)
        name = os.path.basename(f.tmp_path)
        assert name.startswith(".x.safetensors.") and name.endswith(".partial")
        assert os.path.dirname(f.tmp_path) == str(tmp_path)
        fd = os.open(f.tmp_path, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
        assert clean_leftovers(str(tmp_path)) == []  # a live save's temp is never taken
        f.write(b"data")
        w.commit()
    assert (tmp_path / "x.safetensors").read_bytes() == b"data"
    assert partials(tmp_path) == []


def test_exception_removes_temp_and_keeps_destination(tmp_path):
    dest = tmp_path / "x.safetensors"
    dest.write_bytes(b"old")
    with pytest.raises(RuntimeError), AtomicWriter() as w:
        w.open(str(dest)).write(b"new but unfinished")
        raise RuntimeError("boom")
    assert dest.read_bytes() == b"old"
    assert partials(tmp_path) == []


@pytest.mark.needs("flock")
def test_unlocked_leftovers_are_deleted_at_the_next_save(tmp_path):
    left = tmp_path / ".model.safetensors.00deadbeef00.partial"
    left.write_bytes(b"x" * 100)
    other = tmp_path / "keep.partial"  # not a hidden temp name: not ours
    other.write_bytes(b"y")
    foreign = tmp_path / ".download.partial"  # another tool's hidden temp: not ours either
    foreign.write_bytes(b"z")
    write_text_atomic(str(tmp_path / "report.json"), "{}\n")
    assert not left.exists() and other.exists() and foreign.exists()
    assert (tmp_path / "report.json").read_text() == "{}\n"


@pytest.mark.needs("flock")
def test_sigkilled_save_is_cleaned_by_the_next_one(tmp_path):
    code = textwrap.dedent(
        f"""
        import sys, time
        from inspector.core.save.writer import AtomicWriter
        w = AtomicWriter()
        f = w.open({str(tmp_path / "big.safetensors")!r})
        f.write(b"x" * 1000)
        print(f.tmp_path, flush=True)
        time.sleep(60)
        """
    )
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        tmp = p.stdout.readline().strip()
        assert os.path.exists(tmp)
        assert clean_leftovers(str(tmp_path)) == []  # still locked by the live process
        p.send_signal(signal.SIGKILL)
        p.wait(10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert os.path.exists(tmp)  # SIGKILL runs no cleanup
    save_arrays(str(tmp_path / "next.safetensors"), sample())
    assert not os.path.exists(tmp)
    assert partials(tmp_path) == []


def test_refuses_to_overwrite_its_input(tmp_path):
    src = str(tmp_path / "in.safetensors")
    save_arrays(src, sample())
    link = tmp_path / "link.safetensors"
    link.symlink_to(src)
    hard = tmp_path / "hard.safetensors"
    os.link(src, hard)
    for target in (src, str(link), str(hard), str(tmp_path / "." / "in.safetensors")):
        with pytest.raises(CheckpointError, match="input"), AtomicWriter([src]) as w:
            w.open(target)
    assert partials(tmp_path) == []


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        save_arrays(str(tmp_path / "nope" / "x.safetensors"), sample())


def test_disk_full_is_a_clear_error_and_leaves_nothing(tmp_path, monkeypatch):
    dest = tmp_path / "x.safetensors"
    dest.write_bytes(b"old")
    real_write = os.write

    def full(fd, data):
        if len(data) > 16:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(writer_mod.os, "write", full)
    with pytest.raises(CheckpointError, match="no space left") as e:
        save_arrays(str(dest), sample())
    assert "Traceback" not in str(e.value)
    monkeypatch.undo()
    assert dest.read_bytes() == b"old"
    assert partials(tmp_path) == []


def test_unwritable_folder_is_a_clear_error(tmp_path, monkeypatch):
    real_open = os.open

    def denied(path, flags, *args, **kw):
        if str(path).endswith(".partial") and flags & os.O_CREAT:
            raise OSError(errno.EACCES, "Permission denied")
        return real_open(path, flags, *args, **kw)

    monkeypatch.setattr(writer_mod.os, "open", denied)
    with pytest.raises(CheckpointError, match="permission denied"):
        save_arrays(str(tmp_path / "x.safetensors"), sample())


def test_short_write_is_refused_before_publishing(tmp_path):
    dest = tmp_path / "x.safetensors"
    entries = [TensorEntry("x", DTYPES["F32"], (4,))]
    with pytest.raises(RuntimeError, match="promises"), AtomicWriter() as w:
        f = w.open_safetensors(str(dest), entries, None)
        f.write(np.zeros(3, dtype=np.float32))
        w.commit()
    assert not dest.exists() and partials(tmp_path) == []


def test_commit_renames_all_files_and_created_folder_goes_on_abort(tmp_path):
    out = tmp_path / "shards"
    with AtomicWriter() as w:
        w.make_folder(str(out))
        w.write_text(str(out / "a.txt"), "a")
        w.write_text(str(out / "b.txt"), "b")
        # nothing final before the commit: only temps and the save's lock/journal file
        assert sorted(n for n in os.listdir(out) if not n.endswith(".txn")) == partials(out)
        w.commit()
    assert sorted(os.listdir(out)) == ["a.txt", "b.txt"]
    out2 = tmp_path / "shards2"
    with AtomicWriter() as w:
        w.make_folder(str(out2))
        w.write_text(str(out2 / "a.txt"), "a")
    assert not out2.exists()


def test_filesystem_without_locks_still_saves(tmp_path, monkeypatch):
    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", no_locks)
    left = tmp_path / ".old.safetensors.abc.partial"
    left.write_bytes(b"?")  # cannot be proven dead without locks: kept
    save_arrays(str(tmp_path / "x.safetensors"), sample())
    assert load_file(str(tmp_path / "x.safetensors"))["a.ids"].tolist() == [1, -2, 3]
    assert partials(tmp_path) == [left.name]


def test_cleanup_ignores_fifos_and_folders_named_like_temps(tmp_path):
    os.mkfifo(tmp_path / ".pipe.partial")
    (tmp_path / ".dir.partial").mkdir()
    assert clean_leftovers(str(tmp_path)) in ([], [str(tmp_path / ".pipe.partial")])
    assert (tmp_path / ".dir.partial").is_dir()


@pytest.mark.parametrize(
    "mode, kind",
    [
        (stat.S_IFIFO | 0o600, "a named pipe (FIFO)"),
        (stat.S_IFCHR | 0o600, "a device"),
        (stat.S_IFBLK | 0o600, "a device"),
        (stat.S_IFSOCK | 0o600, "a socket"),
        (stat.S_IFLNK | 0o777, "not a regular file"),
    ],
)
def test_each_kind_of_file_is_named(mode, kind):
    assert file_kind(mode) == kind


@pytest.mark.parametrize(
    "err, reason",
    [
        (errno.ENOSPC, "no space left on the disk"),
        (errno.EDQUOT, "disk quota exceeded"),
        (errno.EACCES, "permission denied"),
        (errno.EPERM, "permission denied"),
        (errno.EROFS, "the disk is read-only"),
        (errno.EIO, "Input/output error"),
    ],
)
def test_each_write_error_is_worded(err, reason):
    assert os_error_reason(OSError(err, os.strerror(err))) == reason


@pytest.mark.needs("flock")
def test_leftovers_are_cleaned_in_the_folder_asked_not_the_working_one(tmp_path, monkeypatch):
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    for folder in (here, there):
        (folder / ".m.safetensors.0123456789ab.partial").write_bytes(b"dead")
    monkeypatch.chdir(here)
    gone = clean_leftovers(str(there))
    assert gone == [str(there / ".m.safetensors.0123456789ab.partial")]
    assert os.listdir(there) == [] and len(os.listdir(here)) == 1


def test_a_pending_file_is_written_beside_its_target(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(tmp_path)
    with AtomicWriter() as w:
        f = w.open(str(out / "a.bin"))
        assert os.path.dirname(f.tmp_path) == str(out)
        f.write(b"x")
        w.commit()
    assert (out / "a.bin").read_bytes() == b"x"
