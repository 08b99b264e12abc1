"""Per-thread reusable buffers for the block loops of the cast and the precision report.

A block kernel makes a dozen temporaries per block. Allocated each time, blocks of a few hundred
KiB sit near glibc's mmap threshold, and mapping, faulting in and unmapping them cost more than
the arithmetic (twice as much, measured). Each thread keeps its own set, so the cast workers
never share one; they are freed with the thread.
"""

from __future__ import annotations

import threading

import numpy as np

_local = threading.local()


def scratch(slot: str, n: int, dtype: type[np.generic] | np.dtype) -> np.ndarray:
    """A 1-D array of ``n`` elements of ``dtype`` for ``slot``, reused by this thread.

    Its contents are garbage; it stays valid until this thread asks for the same slot again.
    """
    dtype = np.dtype(dtype)
    nbytes = n * dtype.itemsize
    bufs: dict[str, np.ndarray] = _local.__dict__.setdefault("bufs", {})
    buf = bufs.get(slot)
    if buf is None or buf.size < nbytes:
        buf = bufs[slot] = np.empty(nbytes, dtype=np.uint8)
    return buf[:nbytes].view(dtype)
