"""Deleting a file this program holds open, refused as Windows refuses it: a save (committed or
given up) still leaves no journal and no temp once ``unlink_open`` is off, as it is there."""

from __future__ import annotations

import errno
import os

import pytest

from inspector.core.platform.facilities import WITHOUT_ENV
from inspector.core.save.writer import AtomicWriter


@pytest.fixture
def windows_unlink(monkeypatch):
    """os.unlink refusing a path some descriptor of this process still has open."""
    held: dict[int, str] = {}
    real_open, real_close, real_unlink = os.open, os.close, os.unlink

    def open_(path, flags, mode=0o777, *, dir_fd=None):
        fd = real_open(path, flags, mode, dir_fd=dir_fd)
        held[fd] = os.fspath(path)
        return fd

    def close(fd):
        held.pop(fd, None)
        real_close(fd)

    def unlink(path, *, dir_fd=None):
        if os.fspath(path) in held.values():
            e = PermissionError(errno.EACCES, "being used by another process", os.fspath(path))
            e.winerror = 32
            raise e
        real_unlink(path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "close", close)
    monkeypatch.setattr(os, "unlink", unlink)


def _save(folder, commit: bool) -> None:
    with AtomicWriter(root=str(folder)) as w:
        for name in ("a", "b"):
            w.open(str(folder / name)).write(b"new " + name.encode())
        if commit:
            w.commit()


@pytest.mark.parametrize("commit", [True, False])
def test_no_journal_or_temp_is_left_where_open_files_cannot_be_deleted(
    tmp_path, monkeypatch, windows_unlink, commit
):
    monkeypatch.setenv(WITHOUT_ENV, "unlink_open,flock")  # Windows: no flock either
    (tmp_path / "a").write_bytes(b"old a")
    _save(tmp_path, commit)
    assert sorted(os.listdir(tmp_path)) == (["a", "b"] if commit else ["a"])
    assert (tmp_path / "a").read_bytes() == (b"new a" if commit else b"old a")


def test_deleting_while_open_left_the_journal_behind(tmp_path, monkeypatch, windows_unlink):
    """What the fallback fixes: the POSIX order (delete, then close) on such a system."""
    monkeypatch.setenv(WITHOUT_ENV, "flock")
    _save(tmp_path, commit=True)
    assert [n for n in os.listdir(tmp_path) if n.endswith(".txn")]


def test_a_destination_another_program_holds_is_refused_in_one_line(tmp_path, monkeypatch):
    """Windows refuses the rename for as long as another program has the file open."""
    from inspector.core.errors import CheckpointError
    from inspector.core.platform import file_io
    from inspector.core.save.writer import write_text_atomic

    def busy(a, b):
        e = PermissionError(errno.EACCES, "being used by another process")
        e.winerror = 32
        raise e

    monkeypatch.setattr(file_io, "RETRY_DELAYS", (0.0, 0.0))
    monkeypatch.setattr(os, "replace", busy)
    (tmp_path / "report.json").write_text("old")
    with pytest.raises(CheckpointError) as e:
        write_text_atomic(tmp_path / "report.json", "new")
    assert str(e.value) == (
        f"{tmp_path / 'report.json'}: cannot replace: it is open in another program (or "
        "mapped by one), and Windows does not let an open file be replaced; close it there "
        "and save again (a read-only file is refused the same way)"
    )
    assert os.listdir(tmp_path) == ["report.json"]
    assert (tmp_path / "report.json").read_text() == "old"
