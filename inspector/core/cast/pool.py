"""Casting (and measuring) the chunks of a checkpoint on every core, results kept in order.

Two kinds of workers share one ordered queue:

* threads, for chunks the caller has read: numpy releases the GIL inside its loops, but on
  its short passes the hand-offs eat most of the second core (docs/benchmarks.md);
* worker processes, for large casts of plain byte ranges: each reads its range, casts it and
  writes it in place in the temp file (:mod:`.cast_worker`), so the cores really run in parallel.

Each chunk is measured into its own accumulator, merged in chunk order, so the report is the
same on every run and either way. At most ``depth`` chunks are in flight: memory stays at a few
chunks whatever the file size.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import numpy as np

from ..dtypes import DType
from ..errors import CheckpointError
from ..thread_start import signals_held
from .chunk import cast_chunk
from .precision import ErrorAccumulator
from .worker import FileId, RangeTask, cast_range
from .worker_boot import spawn_workers, stop_workers, take_early_workers

__all__ = ["ChunkCaster", "cast_chunk", "start_processes"]


def start_processes(n: int) -> ProcessPoolExecutor:
    """``n`` cast worker processes: those the program started early if it did, else new ones."""
    return take_early_workers(n) or spawn_workers(n)


class ChunkCaster:
    """``submit``/``submit_range``/``copy`` chunks in order; ``ready`` yields them in that order:
    an array to write, or the byte count a worker process already wrote in its place.

    ``processes`` > 0 lets :meth:`submit_range` use that many worker processes, started on the
    first such chunk (:func:`start_processes`).
    """

    def __init__(self, workers: int = 2, depth: int = 4, processes: int = 0) -> None:
        self._threads: ThreadPoolExecutor | None = None
        self._processes: ProcessPoolExecutor | None = None
        self._workers, self._n_processes = workers, processes
        self._depth = max(depth, 2 * processes + 1)  # every process busy, the next one queued
        self._pending: deque[tuple[Future, ErrorAccumulator | None, int]] = deque()
        self._read_to: dict[FileId, int] = {}  # how far into each source the workers read

    @property
    def has_processes(self) -> bool:
        return self._n_processes > 0

    def submit(self, raw: np.ndarray, src: DType, dst: DType, acc: ErrorAccumulator | None) -> None:
        """Queue one chunk (``raw`` must not be reused); ``acc`` gets its numbers in order."""
        if self._threads is None:
            self._threads = ThreadPoolExecutor(self._workers, thread_name_prefix="cast")
        self._queue(self._threads, acc, -1, cast_chunk, raw, src, dst, acc)

    def submit_call(
        self, fn: Callable[..., tuple[np.ndarray, ErrorAccumulator | None]],
        acc: ErrorAccumulator | None, *args: object,
    ) -> None:  # fmt: skip
        """Queue ``fn(*args)`` on the cast threads: it returns ``(bytes to write, its own
        accumulator)`` like :func:`cast_chunk` (a quantized weight's rows, dequantized and cast)."""
        if self._threads is None:
            self._threads = ThreadPoolExecutor(self._workers, thread_name_prefix="cast")
        self._queue(self._threads, acc, -1, fn, *args)

    def submit_range(self, task: RangeTask, out_nbytes: int, acc: ErrorAccumulator | None) -> None:
        """Queue ``task`` (``out_nbytes`` of output) for a worker process; ``acc`` as above."""
        if not self.has_processes:
            raise ValueError("this caster has no worker processes")
        if self._processes is None:
            self._processes = start_processes(self._n_processes)
        end = task.start + task.nbytes
        self._read_to[task.source] = max(end, self._read_to.get(task.source, 0))
        self._queue(self._processes, acc, out_nbytes, cast_range, task)

    def copy(self, raw: np.ndarray) -> None:
        """Queue bytes that are written as they are, in their place in the order."""
        done: Future = Future()
        done.set_result((raw, None))
        self._pending.append((done, None, -1))

    def _queue(
        self,
        pool: Executor,
        acc: ErrorAccumulator | None,
        in_place: int,
        fn: Callable[..., Any],
        *args: object,
    ) -> None:
        try:
            with signals_held():  # submit may start a thread
                future = pool.submit(fn, *args)
        except BrokenProcessPool:  # the pool already knows a worker died
            raise self._worker_died() from None
        self._pending.append((future, acc, in_place))

    def ready(self, drain: bool = False) -> Iterator[np.ndarray | int]:
        """Finished chunks, oldest first: while more than ``depth`` wait, or all with ``drain``."""
        while self._pending and (drain or len(self._pending) > self._depth):
            future, acc, in_place = self._pending.popleft()
            try:
                result = future.result()  # re-raises what the cast raised
            except BrokenProcessPool:
                raise self._worker_died() from None
            out, part = (in_place, result) if in_place >= 0 else result
            if acc is not None and part is not None:
                acc.merge(part)
            yield out

    def close(self) -> None:
        """Stop: drop the chunks not started, wait for those running, so that no worker
        writes into a temp file once this returns. A Ctrl-C meanwhile (a user pressing it
        again) is raised once this is done: inside a future's lock it would leave that lock
        taken and a pool thread waiting for it forever."""
        with signals_held():
            for future, _, _ in self._pending:
                future.cancel()
            self._pending.clear()
            pools, self._threads, self._processes = (self._threads, self._processes), None, None
            for pool in pools:
                if pool is not None:
                    stop_workers(pool)

    def _worker_died(self) -> CheckpointError:
        """What a user is told when a worker stopped mid-cast: a source truncated in place
        under a worker's map (SIGBUS) is named; otherwise the kernel or someone killed it."""
        for source, end in self._read_to.items():
            try:
                st = os.stat(source.path)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == (source.device, source.inode) and st.st_size < end:
                return CheckpointError(
                    source.name, "file was truncated on disk while it was being cast"
                )
        return CheckpointError(None, "a cast worker process stopped unexpectedly (out of memory?)")
