"""Mapping ranges of a file: read in by the map call (Linux ``MAP_POPULATE``), and dropped from
this process once read (``madvise(MADV_DONTNEED)``). Both only save time or resident memory:
without them the pages fault in on first touch and stay until the map is closed.

POSIX lets a save rename over a file this program still has mapped (the map keeps the old
inode); Windows refuses. There every holder of maps (:func:`track`) is asked to close its maps
of a save's destinations before the commit (:func:`release_maps_of`).
"""

from __future__ import annotations

import contextlib
import mmap
import sys
import weakref
from collections.abc import Iterable
from typing import Protocol

from .facilities import allowed


def read_only_map(fd: int, length: int, offset: int) -> mmap.mmap:
    """A shared read-only map of ``length`` bytes at ``offset`` (a multiple of
    ``mmap.ALLOCATIONGRANULARITY``), its pages read in at once where the system can."""
    if hasattr(mmap, "MAP_SHARED"):  # POSIX
        populate = getattr(mmap, "MAP_POPULATE", 0) if allowed("populate") else 0
        return mmap.mmap(
            fd, length, flags=mmap.MAP_SHARED | populate, prot=mmap.PROT_READ, offset=offset
        )
    return mmap.mmap(fd, length, access=mmap.ACCESS_READ, offset=offset)  # Windows


class MapHolder(Protocol):
    def release_file(self, path: str) -> bool:
        """Close this holder's map of ``path``; False if a view of it is still in use."""


_holders: weakref.WeakValueDictionary[int, MapHolder] = weakref.WeakValueDictionary()


def track(holder: MapHolder) -> None:
    """Remember ``holder`` (until it is collected) as one that maps files."""
    _holders[id(holder)] = holder


def can_replace_mapped() -> bool:
    """May a file this process has mapped be renamed over? (POSIX yes, Windows no.)"""
    return allowed("replace_mapped") and sys.platform != "win32"


def release_maps_of(paths: Iterable[str]) -> list[str]:
    """Where a mapped file cannot be replaced, close this process's maps of ``paths``; return
    the paths still mapped (a view of them alive), which must not be replaced now."""
    if can_replace_mapped():
        return []
    paths = list(paths)
    return sorted({p for h in list(_holders.values()) for p in paths if not h.release_file(p)})


def release_pages(mm: mmap.mmap, start: int, end: int) -> None:
    """Drop the mapped pages of [start, end) from this process (the page cache keeps them)."""
    if not allowed("madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return
    start = start // mmap.PAGESIZE * mmap.PAGESIZE
    with contextlib.suppress(OSError, ValueError):
        mm.madvise(mmap.MADV_DONTNEED, start, min(end, len(mm)) - start)
