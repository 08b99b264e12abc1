"""A worker process's allocator. glibc hands blocks of more than 128 KiB back to the system as
soon as they are freed, and asks for them again for the next block of rows: a preview worker,
which allocates a few MiB per block, then spent 8% of its CPU time in page faults (system
time, docs/benchmarks.md). Told to keep what it frees, it reuses it. Elsewhere (macOS, Windows,
musl) the allocator is left as it is: a little slower, nothing else changes."""

from __future__ import annotations

import sys

from .facilities import allowed

# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3


def keep_freed_memory(limit: int = 256 << 20) -> bool:
    """Keep up to ``limit`` bytes of freed memory in this process for reuse; True if the
    allocator took the settings (glibc only)."""
    if not (allowed("mallopt") and sys.platform.startswith("linux")):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    settings = ((_M_MMAP_THRESHOLD, 32 << 20), (_M_TRIM_THRESHOLD, limit), (_M_TOP_PAD, 16 << 20))
    return all(mallopt(param, value) == 1 for param, value in settings)
