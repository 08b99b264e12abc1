"""Writing, syncing and renaming files the same way on every system, or as close as it gets.

* ``pwrite`` (POSIX): cast worker processes write their ranges in place. Without it there are no
  worker processes; the cast runs on threads and the writer thread writes everything in order.
* ``fsync``: on macOS ``fsync`` leaves data in the drive's cache, so ``F_FULLFSYNC`` is asked
  first, and plain ``fsync`` where the file system refuses it (SMB).
* folder ``fsync`` makes a rename survive a power cut (POSIX). Windows cannot open a folder to
  sync it: there each rename is a ``MoveFileEx`` with ``MOVEFILE_WRITE_THROUGH``, which returns
  once the rename is on the disk.
* ``replace`` retries for about two seconds when Windows refuses to rename over a file another
  handle holds (a virus scanner, an indexer), then names the cause.
* write-behind (Linux ``sync_file_range``, ``posix_fadvise``) only makes the closing ``fsync``
  shorter; without it the ``fsync`` does all the work.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any

from .facilities import allowed
from .names import long_path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

# ERROR_ACCESS_DENIED, ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION: a handle elsewhere holds it
_BUSY_WINERRORS = frozenset({5, 32, 33})
RETRY_DELAYS: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8)


# -- pwrite ---------------------------------------------------------------------------------------
def can_pwrite() -> bool:
    """Positioned writes from several processes into one open file (POSIX)."""
    return allowed("pwrite") and hasattr(os, "pwrite")


def pwrite_all(fd: int, data: memoryview, offset: int) -> int:
    """Write all of ``data`` at ``offset`` (only called where :func:`can_pwrite`)."""
    done = 0
    while done < len(data):
        done += os.pwrite(fd, data[done:], offset + done)
    return done


# -- creating -------------------------------------------------------------------------------------
def native(path: str) -> str:
    """``path`` as the system opens it: on Windows past ``MAX_PATH`` with the ``\\\\?\\``
    prefix (a deep model folder's shard names pass 260 characters), elsewhere unchanged."""
    return long_path(path) if sys.platform == "win32" else path


def create_new(path: str, access: int, mode: int) -> int:
    """Create ``path`` (never an existing one) and open it for ``access`` (``os.O_WRONLY`` or
    ``os.O_RDWR``), binary and not inherited by child processes: ``O_CLOEXEC`` on POSIX,
    ``O_NOINHERIT`` and ``O_BINARY`` on Windows, which has no ``O_CLOEXEC``."""
    private = sum(getattr(os, f, 0) for f in ("O_CLOEXEC", "O_NOINHERIT", "O_BINARY"))
    return os.open(native(path), access | os.O_CREAT | os.O_EXCL | private, mode)


def remove_and_close(path: str | None, fd: int) -> None:
    """Delete ``path`` (a file of ours) and close ``fd``, its descriptor (-1: none). Deleted
    while still open where the system allows (POSIX: its lock holds to the end), else closed
    first: Windows refuses to delete an open file, which left every journal behind."""
    open_delete = allowed("unlink_open") and sys.platform != "win32"
    if path is not None and open_delete:
        with contextlib.suppress(OSError):
            os.unlink(native(path))
    if fd >= 0:
        os.close(fd)
    if path is not None and not open_delete:
        with contextlib.suppress(OSError):
            os.unlink(native(path))


# -- permissions ----------------------------------------------------------------------------------
def can_set_mode() -> bool:
    """POSIX permission bits on an open file (Windows before Python 3.13 has no ``fchmod``, and
    its files have only a read-only flag: a new output there is simply writable)."""
    return allowed("fchmod") and hasattr(os, "fchmod")


def set_mode(fd: int, mode: int) -> None:
    if can_set_mode():
        os.fchmod(fd, mode)


def read_only_file_system(folder: str) -> bool:
    """Is ``folder`` on a file system mounted read-only? (Only words an error; False if unknown.)"""
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs on Windows
        return False


# -- durability -----------------------------------------------------------------------------------
def sync_file(fd: int) -> None:
    """Flush a file's data to the disk: ``F_FULLFSYNC`` where there is one (macOS), else fsync."""
    flag = getattr(fcntl, "F_FULLFSYNC", None) if allowed("full_fsync") else None
    if flag is not None:
        try:
            fcntl.fcntl(fd, flag)
            return
        except OSError:
            pass  # not on every file system (SMB, some external drives): fsync does what it can
    os.fsync(fd)


def can_sync_folder() -> bool:
    """Can a folder be opened and fsynced, making renames in it durable? (Not on Windows.)"""
    return allowed("dir_fsync") and os.name != "nt" and hasattr(os, "O_DIRECTORY")


def sync_folder(folder: str) -> None:
    """Make the renames done in ``folder`` durable; where folders cannot be synced, the
    renames were written through already (:func:`replace`)."""
    if not can_sync_folder():
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            sync_file(fd)
        finally:
            os.close(fd)


def sync_folder_fd(fd: int) -> None:
    """:func:`sync_folder` for a folder already open."""
    if can_sync_folder():
        sync_file(fd)


# -- renames --------------------------------------------------------------------------------------
def replace(
    src: str, dst: str, *, src_dir_fd: int | None = None, dst_dir_fd: int | None = None
) -> None:
    """``os.replace``, durable where folders cannot be synced, retried while Windows reports the
    destination busy; the last refusal is raised (see :func:`busy_reason`)."""
    for delay in (*RETRY_DELAYS, None):
        try:
            _replace_once(src, dst, src_dir_fd, dst_dir_fd)
            return
        except PermissionError as e:
            if delay is None or not is_busy(e):
                raise
            time.sleep(delay)


def _replace_once(src: str, dst: str, src_dir_fd: int | None, dst_dir_fd: int | None) -> None:
    if src_dir_fd is not None or dst_dir_fd is not None:
        os.replace(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
    elif sys.platform == "win32":
        _move_file_ex(native(src), native(dst))
    else:
        os.replace(src, dst)


def _move_file_ex(src: str, dst: str) -> None:  # pragma: no cover - Windows only
    """Rename over ``dst`` and return once the rename is on the disk (Windows)."""
    import ctypes

    replace_existing, write_through = 0x1, 0x8
    kernel32: Any = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    if not kernel32.MoveFileExW(src, dst, replace_existing | write_through):
        code = ctypes.get_last_error()
        raise ctypes.WinError(code)  # type: ignore[attr-defined]


def is_busy(e: OSError) -> bool:
    """Windows refused because another handle holds the file (not a permission problem)."""
    return getattr(e, "winerror", None) in _BUSY_WINERRORS


def busy_reason(e: OSError) -> str | None:
    """The reason to show when Windows kept refusing to replace an open file, else None."""
    if not is_busy(e):
        return None
    return (
        "it is open in another program (or mapped by one), and Windows does not let an open "
        "file be replaced; close it there and save again (a read-only file is refused the same way)"
    )


# -- write-behind ---------------------------------------------------------------------------------
def _load_sync_file_range() -> Any:
    """Linux ``sync_file_range``, looked up among the process's own symbols (libc is loaded):
    ``ctypes.util.find_library`` would fork ``ldconfig -p`` in every process, workers included."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        fn = ctypes.CDLL(None, use_errno=True).sync_file_range
        fn.argtypes = (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint)
        fn.restype = ctypes.c_int
        return fn
    except (OSError, AttributeError):
        return None


_SYNC_FILE_RANGE = _load_sync_file_range()
_SFR_WAIT_BEFORE, _SFR_WRITE, _SFR_WAIT_AFTER = 1, 2, 4


def can_write_behind() -> bool:
    return _SYNC_FILE_RANGE is not None and allowed("writeback")


def start_writeback(fd: int, start: int, nbytes: int) -> None:
    """Hand ``nbytes`` at ``start`` to the kernel's writeback now (Linux; elsewhere nothing)."""
    if can_write_behind():
        _SYNC_FILE_RANGE(fd, start, nbytes, _SFR_WRITE)


def write_behind(fd: int, start: int, end: int, older: int) -> None:
    """Start writeback of [start, end), wait for [older, start) to reach the disk and drop it
    from the page cache (Linux; elsewhere nothing: the closing fsync does it all).

    Keeps the disk busy from the first chunk on and the dirty page cache bounded at two
    ranges, instead of one huge flush at fsync time (and the kernel throttling our writes).
    """
    if not can_write_behind():
        return
    _SYNC_FILE_RANGE(fd, start, end - start, _SFR_WRITE)
    if start > older:
        _SYNC_FILE_RANGE(fd, older, start - older, _SFR_WAIT_BEFORE | _SFR_WRITE | _SFR_WAIT_AFTER)
        with contextlib.suppress(OSError, AttributeError):
            os.posix_fadvise(fd, older, start - older, os.POSIX_FADV_DONTNEED)
