"""Liveness locks: a save holds an exclusive lock on its journal and temps while it runs, so the
next save can tell a live save's files from a dead one's leftovers (``fcntl.flock`` on POSIX,
``msvcrt.locking`` of one byte far past the data on Windows, whose locks are mandatory).

The lock dies with the process, which is the whole point. Where there is no lock (or the file
system refuses one: some NFS/SMB mounts) liveness cannot be told, so leftovers are never cleaned
or rolled forward: a save is never mistaken for a leftover, at the price of a stale temp kept.
"""

from __future__ import annotations

import os

from .facilities import allowed

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
try:
    import msvcrt
except ImportError:  # POSIX
    msvcrt = None  # type: ignore[assignment]

_WINDOWS_LOCK_OFFSET = 1 << 62  # a Windows lock blocks others' I/O on its bytes: none of ours


def can_tell_liveness() -> bool:
    """Is there a lock a dead process lets go of?"""
    return allowed("flock") and (fcntl is not None or msvcrt is not None)


def hold(fd: int) -> bool:
    """Lock ``fd`` (a file this process just created) for as long as it is open; False where
    there is no lock or the file system refuses it: the save goes on unlocked."""
    if not can_tell_liveness():
        return False
    try:
        _lock(fd, wait=True)  # only another save's cleanup, for an instant, can hold it
    except OSError:
        return False
    return True


def try_take(fd: int) -> bool:
    """Lock ``fd`` unless a live process holds it (or no lock can be taken): True if taken."""
    if not can_tell_liveness():
        return False
    try:
        _lock(fd)
    except OSError:
        return False
    return True


def _lock(fd: int, wait: bool = False) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        return
    pos = os.lseek(fd, 0, os.SEEK_CUR)  # pragma: no cover - Windows only
    try:
        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_LOCK if wait else msvcrt.LK_NBLCK, 1)
    finally:
        os.lseek(fd, pos, os.SEEK_SET)
