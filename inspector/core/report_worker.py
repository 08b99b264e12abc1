"""The precision report of a cast, measured on a second thread.

numpy releases the GIL inside its loops, so while the main thread reads and casts chunk k+1, this
thread measures chunk k: the report stops adding its time to the cast's. Chunks are measured in
order (one worker), on a copy of the source bytes (the reader reuses its buffer), and at most two
chunks wait, so memory stays bounded.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from .precision import ErrorAccumulator

MAX_WAITING = 2


class ReportWorker:
    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._pending: deque[Future[None]] = deque()

    def submit(self, acc: ErrorAccumulator, orig: np.ndarray, cast: np.ndarray) -> None:
        """Measure (orig, cast) after everything submitted before; ``cast`` must not change."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="cast-report")
        self._pending.append(self._pool.submit(acc.update, orig.copy(), cast))
        while len(self._pending) > MAX_WAITING:
            self._pending.popleft().result()  # re-raises what the measurement raised

    def drain(self) -> None:
        """Wait until every submitted chunk is measured (before reading an accumulator)."""
        while self._pending:
            self._pending.popleft().result()

    def close(self) -> None:
        """Stop: wait for the chunks in flight (they hold no file), then end the thread."""
        for f in self._pending:
            f.cancel()
        self._pending.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
