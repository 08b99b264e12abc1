"""Casting (and measuring) the chunks of a checkpoint on both cores, results kept in order.

numpy releases the GIL inside its loops, so the casting runs while the caller reads ahead and the
writer thread writes behind. Two cast threads share the chunks; on a 2-vCPU machine the second
adds little (GIL hand-offs between short numpy passes: docs/benchmarks.md), but costs nothing.
Each chunk is measured into its own accumulator, merged in chunk order, so the report is the
same on every run. At most ``depth`` chunks are in flight: memory stays at a few chunks whatever
the file size.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from .cast import cast_bits
from .dtypes import DType
from .narrow_float import ROUNDED_FROM_F32, round_f32
from .precision import BLOCK, ErrorAccumulator
from .thread_start import signals_held


def cast_chunk(
    raw: np.ndarray, src: DType, dst: DType, acc: ErrorAccumulator | None
) -> tuple[np.ndarray, ErrorAccumulator | None]:
    """The ``dst`` bytes of one chunk of ``src`` bytes, and its measurement (a fresh accumulator)."""
    part = acc.fresh() if acc is not None else None
    if src.name == "F32" and dst.name in ROUNDED_FROM_F32:
        # the common case: one fused pass per block gives both the codes and the report's values
        w = raw.view(np.uint32)
        out = np.empty(w.size, dtype=np.uint8 if dst.bits == 8 else np.uint16)
        with np.errstate(all="ignore"):
            for i in range(0, w.size, BLOCK):
                got = round_f32(w[i : i + BLOCK], dst.name, out[i : i + BLOCK], part is not None)
                if part is not None:
                    part.measure(got.magnitude, got.rounded)
        return out.view(np.uint8), part
    out = cast_bits(raw.view(f"u{src.bits // 8}"), src, dst)
    if part is not None:
        part.update(raw.view(src.numpy), out.view(dst.numpy))
    return out.view(np.uint8), part


class ChunkCaster:
    """``submit`` chunks in order; ``ready`` yields the cast bytes in the same order."""

    def __init__(self, workers: int = 2, depth: int = 4) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._workers, self._depth = workers, depth
        self._pending: deque[tuple[Future, ErrorAccumulator | None]] = deque()

    def submit(self, raw: np.ndarray, src: DType, dst: DType, acc: ErrorAccumulator | None) -> None:
        """Queue one chunk (``raw`` must not be reused); ``acc`` gets its numbers in order."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="cast")
        with signals_held():  # submit may start a worker thread
            future = self._pool.submit(cast_chunk, raw, src, dst, acc)
        self._pending.append((future, acc))

    def ready(self, drain: bool = False) -> Iterator[np.ndarray]:
        """Finished chunks, oldest first: while more than ``depth`` wait, or all with ``drain``."""
        while self._pending and (drain or len(self._pending) > self._depth):
            future, acc = self._pending.popleft()
            out, part = future.result()  # re-raises what the cast raised
            if acc is not None and part is not None:
                acc.merge(part)
            yield out

    def close(self) -> None:
        """Stop: drop the chunks not started, wait for those running (they hold no file)."""
        for future, _ in self._pending:
            future.cancel()
        self._pending.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
