"""Mapping ranges of a file: read in by the map call (Linux ``MAP_POPULATE``), and dropped from
this process once read (``madvise(MADV_DONTNEED)``). Both only save time or resident memory:
without them the pages fault in on first touch and stay until the map is closed."""

from __future__ import annotations

import contextlib
import mmap

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


def release_pages(mm: mmap.mmap, start: int, end: int) -> None:
    """Drop the mapped pages of [start, end) from this process (the page cache keeps them)."""
    if not allowed("madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return
    start = start // mmap.PAGESIZE * mmap.PAGESIZE
    with contextlib.suppress(OSError, ValueError):
        mm.madvise(mmap.MADV_DONTNEED, start, min(end, len(mm)) - start)
