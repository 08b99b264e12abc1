"""Renames retried while Windows reports the destination busy, F_FULLFSYNC where it exists,
folder fsync only where a folder can be opened: each choice made on Linux with the system's
answer replaced."""

from __future__ import annotations

import errno
import os
import sys
import types

import pytest

from inspector.core.platform import file_io
from inspector.core.platform.facilities import WITHOUT_ENV


def _busy() -> PermissionError:
    e = PermissionError(errno.EACCES, "The process cannot access the file")
    e.winerror = 32  # ERROR_SHARING_VIOLATION, as Windows sets it
    return e


@pytest.fixture
def flaky_replace(tmp_path, monkeypatch):
    """os.replace refusing the first ``fails[0]`` calls as Windows does for an open file."""
    monkeypatch.setattr(file_io, "RETRY_DELAYS", (0.0,) * 4)
    real, fails = os.replace, [0]

    def replace(a, b):
        if fails[0]:
            fails[0] -= 1
            raise _busy()
        real(a, b)

    monkeypatch.setattr(os, "replace", replace)
    (tmp_path / "new").write_text("new")
    (tmp_path / "dst").write_text("old")
    return tmp_path, fails


def test_a_busy_destination_is_retried_until_it_is_let_go(flaky_replace):
    folder, fails = flaky_replace
    fails[0] = 4
    file_io.replace(str(folder / "new"), str(folder / "dst"))
    assert (folder / "dst").read_text() == "new" and fails[0] == 0


def test_a_destination_busy_for_good_is_refused_with_its_cause(flaky_replace):
    folder, fails = flaky_replace
    fails[0] = 5
    with pytest.raises(PermissionError) as e:
        file_io.replace(str(folder / "new"), str(folder / "dst"))
    assert "open in another program" in file_io.busy_reason(e.value)
    assert (folder / "dst").read_text() == "old"


def test_a_plain_permission_error_is_not_retried(tmp_path, monkeypatch):
    calls = []

    def refuse(a, b):
        calls.append(a)
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(PermissionError) as e:
        file_io.replace("a", "b")
    assert calls == ["a"] and file_io.busy_reason(e.value) is None


def _fake_fcntl(refuse: bool) -> tuple[types.SimpleNamespace, list]:
    calls: list = []

    def fcntl(fd, flag):
        calls.append(flag)
        if refuse:
            raise OSError(errno.ENOTSUP, "not supported")

    return types.SimpleNamespace(F_FULLFSYNC=51, fcntl=fcntl), calls


@pytest.mark.parametrize("refuse", [False, True])
def test_full_fsync_where_the_system_has_it_else_fsync(tmp_path, monkeypatch, refuse):
    fake, calls = _fake_fcntl(refuse)
    monkeypatch.setattr(file_io, "fcntl", fake)
    synced = []
    monkeypatch.setattr(os, "fsync", synced.append)
    monkeypatch.delenv(WITHOUT_ENV, raising=False)
    with open(tmp_path / "f", "wb") as f:
        file_io.sync_file(f.fileno())
        assert calls == [51] and synced == ([f.fileno()] if refuse else [])
        monkeypatch.setenv(WITHOUT_ENV, "full_fsync")
        file_io.sync_file(f.fileno())
        assert calls == [51] and synced[-1] == f.fileno()


def test_without_folder_fsync_no_folder_is_opened(tmp_path, monkeypatch):
    opened = []
    real = os.open
    monkeypatch.setattr(os, "open", lambda p, *a, **k: (opened.append(p), real(p, *a, **k))[1])
    monkeypatch.delenv(WITHOUT_ENV, raising=False)
    file_io.sync_folder(str(tmp_path))
    assert opened == [str(tmp_path)]
    monkeypatch.setenv(WITHOUT_ENV, "dir_fsync")
    file_io.sync_folder(str(tmp_path))
    assert opened == [str(tmp_path)] and not file_io.can_sync_folder()


def test_without_fchmod_and_o_cloexec_an_output_is_written_with_the_default_mode(
    tmp_path, monkeypatch
):
    """Windows has no O_CLOEXEC, nor (before Python 3.13) os.fchmod: a save there used to stop at
    AttributeError."""
    import numpy as np

    from inspector.core.dtypes import DTYPES
    from inspector.core.save.writer import save_arrays

    src = tmp_path / "src"
    save_arrays(src, [("w", DTYPES["F32"], np.ones(2, np.float32))])
    os.chmod(src, 0o600)
    monkeypatch.delattr(os, "fchmod")  # as on Windows
    monkeypatch.delattr(os, "O_CLOEXEC")  # Windows has O_NOINHERIT instead
    save_arrays(src, [("w", DTYPES["F32"], np.zeros(2, np.float32))])
    assert os.stat(src).st_mode & 0o777 == 0o666 & ~_umask()
    assert src.read_bytes()[-8:] == bytes(8)


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def test_windows_paths_past_max_path_are_opened_with_the_long_prefix(monkeypatch) -> None:
    """A deep model folder's shard names pass 260 characters; Windows opens them only as
    \\\\?\\C:\\..., so creating, renaming and deleting go through file_io.native."""
    import sys

    deep = "C:\\models\\" + "a" * 300 + "\\model-00001-of-00002.safetensors"
    monkeypatch.setattr(sys, "platform", "win32")
    assert file_io.native(deep) == "\\\\?\\" + deep
    assert file_io.native("C:\\short.safetensors") == "C:\\short.safetensors"
    seen: list[str] = []
    monkeypatch.setattr(file_io.os, "open", lambda path, *a, **k: seen.append(path) or 3)
    file_io.create_new(deep, os.O_WRONLY, 0o644)
    assert seen == ["\\\\?\\" + deep]
    monkeypatch.setattr(sys, "platform", "linux")
    assert file_io.native("\\\\" + "x" * 300) == "\\\\" + "x" * 300  # a POSIX name, untouched


def test_positioned_writes_cut_short_are_finished_at_the_right_offsets(tmp_path, monkeypatch):
    """pwrite may write less than asked (a signal, a network file system): the rest follows
    at the offset where the short write stopped, and the loop ends once all is written."""
    path = tmp_path / "f"
    path.write_bytes(b"." * 20)
    real, calls = os.pwrite, []

    def short_pwrite(fd, data, offset):
        calls.append((bytes(data), offset))
        if len(calls) > 10:
            raise AssertionError(f"pwrite_all is still writing: {calls}")
        return real(fd, bytes(data[:3]), offset)

    monkeypatch.setattr(os, "pwrite", short_pwrite)
    fd = os.open(path, os.O_WRONLY)
    try:
        assert file_io.pwrite_all(fd, memoryview(b"abcdefghij"), 5) == 10
    finally:
        os.close(fd)
    assert path.read_bytes() == b".....abcdefghij....."
    assert [offset for _, offset in calls] == [5, 8, 11, 14]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sync_file_range is Linux's")
def test_write_behind_is_found_on_linux_and_runs_on_ranges_past_4_gib(tmp_path, monkeypatch):
    """The write-behind of a large output (docs/benchmarks.md) is loaded from the process's own
    libc, and ranges past 4 GiB (a large output's) are handed to it without an error."""
    monkeypatch.delenv(WITHOUT_ENV, raising=False)
    assert file_io.can_write_behind()
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    try:
        os.write(fd, b"x" * 4096)
        file_io.start_writeback(fd, 5 << 30, 4096)
        file_io.write_behind(fd, 5 << 30, (5 << 30) + 4096, 4 << 30)
    finally:
        os.close(fd)
    assert (tmp_path / "f").read_bytes() == b"x" * 4096
