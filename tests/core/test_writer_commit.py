"""AtomicWriter and PendingFile at their edges: where each temp is made and with which mode,
which path each refusal names, what a commit fsyncs and links, and what a failing cleanup
(an unlink, an rmdir, a rename during a roll back) must not turn into an error."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from safetensors.numpy import load_file

from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.save import journal as commit_journal
from inspector.core.save import writer as writer_mod
from inspector.core.save.pending_file import PendingFile
from inspector.core.save.tensor_layout import safetensors_layout
from inspector.core.save.writer import AtomicWriter, TensorEntry, save_arrays

pytestmark = pytest.mark.skipif(os.name != "posix", reason="locks, modes and links are POSIX")


def _hidden(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith("."))


def test_each_refusal_names_the_path_it_refuses(tmp_path):
    src = tmp_path / "in.safetensors"
    src.write_bytes(b"x")
    os.mkfifo(tmp_path / "pipe")
    with AtomicWriter([str(src)]) as w:
        w.reserve(str(tmp_path / "a"))
        cases = {
            str(tmp_path / "a"): "is written twice in one save",
            str(tmp_path / "pipe"): "is a named pipe (FIFO); the output is written as a new "
            "regular file, so give a file path",
            str(src): "is the input file; choose another output (the input is read while writing)",
        }
        for path, reason in cases.items():
            with pytest.raises(CheckpointError) as e:
                w.reserve(path)
            assert (e.value.path, e.value.reason) == (path, reason)


@pytest.mark.parametrize(
    ("read_only", "says"), [(True, "the disk is read-only"), (False, "permission denied")]
)
def test_an_unwritable_folder_says_whether_the_disk_is_read_only(
    tmp_path, monkeypatch, read_only, says
):
    """Root may write anywhere, so the refusal is staged: os.access says no, statvfs says why."""
    real_statvfs = os.statvfs

    class Flags:
        f_flag = os.ST_RDONLY if read_only else real_statvfs(tmp_path).f_flag & ~os.ST_RDONLY

    monkeypatch.setattr(os, "access", lambda path, mode: False)
    monkeypatch.setattr(os, "statvfs", lambda path: Flags)
    with pytest.raises(CheckpointError) as e, AtomicWriter() as w:
        w.reserve(str(tmp_path / "x"))
    assert e.value.reason == f"cannot write to folder {tmp_path}: {says}"


def test_the_temps_of_a_sharded_save_sit_in_its_root(tmp_path):
    """So the root's one journal can roll every rename forward (it only moves temps beside it)."""
    (tmp_path / "unet").mkdir()
    entries = [TensorEntry("w", DTYPES["F32"], (1,))]
    with AtomicWriter(root=str(tmp_path)) as w:
        plain = w.open(str(tmp_path / "unet" / "config.json"))
        st = w.open_safetensors(str(tmp_path / "unet" / "m.safetensors"), entries, None)
        laid = w.open_tensor_file(
            str(tmp_path / "unet" / "n.safetensors"), safetensors_layout(entries, None)
        )  # the cast's way: laid out first, written in place
        temps = {os.path.dirname(f.tmp_path) for f in (plain, st, laid)}
        assert temps == {str(tmp_path)}
        plain.write(b"{}")
        st.write(np.ones(1, np.float32))
        laid.write(np.ones(1, np.float32))
        w.commit()
    assert sorted(os.listdir(tmp_path / "unet")) == [
        "config.json",
        "m.safetensors",
        "n.safetensors",
    ]
    assert _hidden(tmp_path) == []  # the journal and the temps are gone


def test_a_commit_fsyncs_every_output_folder_and_the_root(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    synced = []
    real = writer_mod.file_io.sync_folder
    monkeypatch.setattr(writer_mod.file_io, "sync_folder", lambda d: (synced.append(d), real(d)))
    with AtomicWriter(root=str(tmp_path)) as w:
        w.write_text(str(tmp_path / "a" / "x"), "x")
        w.write_text(str(tmp_path / "b" / "y"), "y")
        w.commit()
    assert sorted(set(synced)) == sorted(str(tmp_path / d) for d in ("", "a", "b"))


@pytest.mark.needs("link")
def test_backups_of_replaced_files_are_linked_inside_the_folder(tmp_path, monkeypatch):
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)
    folder = tmp_path / "out"
    folder.mkdir()
    for n in ("a", "b"):
        (folder / n).write_text("old")
    links = []
    real = os.link
    monkeypatch.setattr(os, "link", lambda s, d: (links.append(d), real(s, d))[1])
    with AtomicWriter() as w:
        w.write_text(str(folder / "a"), "new")
        w.write_text(str(folder / "b"), "new")
        w.commit()
    assert len(links) == 2 and {os.path.dirname(d) for d in links} == {str(folder)}
    assert os.listdir(other) == [] and _hidden(folder) == []


@pytest.mark.needs("flock")
def test_two_files_are_journalled_so_a_crash_between_renames_is_rolled_forward(tmp_path):
    for n in ("a", "b"):
        (tmp_path / n).write_text("old")
    code = textwrap.dedent(
        f"""
        import os
        from inspector.core.save.writer import AtomicWriter
        real = os.replace
        def replace(a, b):
            real(a, b)
            os._exit(9)  # dies (no cleanup) after the first of the two renames
        with AtomicWriter() as w:
            w.write_text({str(tmp_path / "a")!r}, "new")
            w.write_text({str(tmp_path / "b")!r}, "new")
            os.replace = replace
            w.commit()
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=os.getcwd())
    )
    assert proc.returncode == 9
    assert {(tmp_path / n).read_text() for n in ("a", "b")} == {"old", "new"}  # mixed
    commit_journal.recover_folder(str(tmp_path))
    assert [(tmp_path / n).read_text() for n in ("a", "b")] == ["new", "new"]
    assert _hidden(tmp_path) == []


def test_a_backup_that_cannot_be_deleted_after_the_commit_is_not_an_error(tmp_path, monkeypatch):
    for n in ("a", "b"):
        (tmp_path / n).write_text("old")
    real = os.unlink

    def stubborn(path, *a, **kw):
        if str(path).endswith(".partial"):
            raise OSError(errno.EBUSY, "busy")
        return real(path, *a, **kw)

    with AtomicWriter() as w:
        w.write_text(str(tmp_path / "a"), "new")
        w.write_text(str(tmp_path / "b"), "new")
        monkeypatch.setattr(os, "unlink", stubborn)
        w.commit()
    assert [(tmp_path / n).read_text() for n in ("a", "b")] == ["new", "new"]


def test_abort_keeps_a_created_folder_someone_put_a_file_in(tmp_path):
    out = tmp_path / "new"
    with AtomicWriter() as w:
        w.make_folder(str(out))
        w.write_text(str(out / "a"), "a")
        (out / "theirs.txt").write_text("keep")
        w.abort()
    assert os.listdir(out) == ["theirs.txt"]


def test_a_roll_back_that_fails_too_reports_the_first_failure(tmp_path, monkeypatch):
    for n in ("a", "b"):
        (tmp_path / n).write_text("old")
    real = os.replace
    calls = []

    def failing(src, dst):
        calls.append(dst)
        if len(calls) == 1:
            return real(src, dst)
        raise OSError(errno.EIO, "I/O error")  # the second rename, then every roll back

    monkeypatch.setattr(
        os, "unlink", lambda *a, **kw: (_ for _ in ()).throw(OSError(errno.EIO, "x"))
    )
    with pytest.raises(CheckpointError) as e, AtomicWriter() as w:
        w.write_text(str(tmp_path / "a"), "new")
        w.write_text(str(tmp_path / "b"), "new")
        monkeypatch.setattr(os, "replace", failing)
        w.commit()
    assert (e.value.path, e.value.reason) == (str(tmp_path / "b"), "cannot replace: I/O error")


def test_save_arrays_stores_each_array_in_its_declared_dtype(tmp_path):
    save_arrays(
        tmp_path / "m.safetensors",
        [("x", DTYPES["F32"], np.array([1.5, -2.0])), ("i", DTYPES["I8"], np.array([3, -4]))],
    )
    back = load_file(str(tmp_path / "m.safetensors"))
    assert back["x"].dtype == np.float32 and back["x"].tolist() == [1.5, -2.0]
    assert back["i"].dtype == np.int8 and back["i"].tolist() == [3, -4]


def test_a_pending_file_makes_its_temp_beside_its_destination(tmp_path, monkeypatch):
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    f = PendingFile(str(tmp_path / "x.bin"))
    try:
        assert os.path.dirname(f.tmp_path) == str(tmp_path)
    finally:
        f.discard()
    g = PendingFile("bare.bin")  # no folder in the name: the current one
    try:
        assert os.path.dirname(os.path.abspath(g.tmp_path)) == str(elsewhere)
        assert g.tmp_path.startswith("./")
    finally:
        g.discard()


def test_a_new_file_gets_the_modes_the_umask_allows(tmp_path):
    old = os.umask(0o022)
    try:
        with AtomicWriter() as w:
            w.write_text(str(tmp_path / "x"), "x")
            w.commit()
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "x").st_mode & 0o777 == 0o644


@pytest.mark.needs("fchmod")  # without it an output gets the default modes
def test_a_replaced_safetensors_file_keeps_its_modes(tmp_path):
    """Written over, a private file stays private: the new file takes the replaced one's bits."""
    path = tmp_path / "m.safetensors"
    save_arrays(path, [("w", DTYPES["F32"], np.zeros(2, np.float32))])
    path.chmod(0o600)
    old = os.umask(0o022)
    try:
        save_arrays(path, [("w", DTYPES["F32"], np.ones(2, np.float32))])
    finally:
        os.umask(old)
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert load_file(str(path))["w"].tolist() == [1.0, 1.0]


def test_a_temp_that_cannot_be_created_names_its_destination(tmp_path, monkeypatch):
    def full(path, flags, *a):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "open", full)
    with pytest.raises(CheckpointError) as e:
        PendingFile(str(tmp_path / "x.bin"))
    assert (e.value.path, e.value.reason) == (
        str(tmp_path / "x.bin"),
        f"cannot write to folder {tmp_path}: no space left on the disk",
    )


def test_a_filesystem_without_chmod_still_saves(tmp_path, monkeypatch):
    (tmp_path / "x").write_text("old")
    os.chmod(tmp_path / "x", 0o600)
    monkeypatch.setattr(
        os, "fchmod", lambda fd, mode: (_ for _ in ()).throw(OSError(errno.EPERM, "no"))
    )
    with AtomicWriter() as w:
        w.write_text(str(tmp_path / "x"), "new")
        w.commit()
    assert (tmp_path / "x").read_text() == "new"


def test_a_rename_that_fails_names_the_destination(tmp_path, monkeypatch):
    f = PendingFile(str(tmp_path / "x.bin"))
    f.write(b"abc")
    f.finish()
    monkeypatch.setattr(
        os, "replace", lambda a, b: (_ for _ in ()).throw(OSError(errno.EXDEV, "cross"))
    )
    with pytest.raises(CheckpointError) as e:
        f.publish()
    assert (e.value.path, e.value.reason) == (str(tmp_path / "x.bin"), "cannot replace: cross")
    monkeypatch.undo()
    f.discard()
    assert os.listdir(tmp_path) == []


def test_discarding_a_temp_someone_already_deleted_is_quiet(tmp_path, monkeypatch):
    """Discarded twice, or closed after, it closes no descriptor again: the one it had may
    already be someone else's (a stale 1 would close the process's stdout)."""
    f = PendingFile(str(tmp_path / "x.bin"))
    os.unlink(f.tmp_path)
    f.discard()
    closed = []
    monkeypatch.setattr(os, "close", closed.append)
    f.discard()
    f.close()
    monkeypatch.undo()
    assert os.listdir(tmp_path) == [] and closed == []


def test_a_cast_of_a_0644_source_under_umask_077_is_0600(tmp_path):
    """The source's mode is a ceiling, the umask another: a private umask keeps the copy private
    (applying the source's 0644 alone made a copy others can read)."""
    from inspector.core.cast.job import cast_checkpoint
    from inspector.core.dtypes import DTYPES
    from inspector.core.opening import open_checkpoint
    from inspector.core.progress import run_job
    from inspector.core.save.writer import save_arrays

    src = tmp_path / "src.safetensors"
    save_arrays(src, [("w", DTYPES["F32"], np.ones(4, np.float32))])
    os.chmod(src, 0o644)
    old = os.umask(0o077)
    try:
        with open_checkpoint(src) as ckpt:
            run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(tmp_path / "out.safetensors")))
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "out.safetensors").st_mode & 0o777 == 0o600
