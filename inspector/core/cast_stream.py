"""How a cast moves its bytes: source chunks read (or handed to worker processes as ranges),
output written in order through the background writer, and how many processes to start."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import numpy as np

from .cast_pool import ChunkCaster, processes_supported, usable_cores
from .cast_worker import FileId, RangeTask
from .checkpoint import Checkpoint, read_byte_chunks
from .dtypes import DType
from .errors import CheckpointError
from .header import Header, TensorInfo
from .pending_file import PendingFile
from .precision import ErrorAccumulator
from .torch_pickle.names import StridedTensorInfo
from .writeback import BackgroundWriter

# Worker processes take ~0.2 s to start; below this much narrowing work, threads finish first.
PROCESS_MIN_BYTES = 256 << 20
MAX_PROCESSES = 4  # each holds ~45 MiB: an interpreter, numpy, one chunk
PROCESSES_ENV = "CHECKPOINT_INSPECTOR_CAST_PROCESSES"  # a count forces it; 0 turns them off
_workers_allowed = False  # see allow_worker_processes


class OutputBatch:
    """Coalesces small outputs so thousands of tiny tensors cost one queue hand-off per MiBs."""

    def __init__(self, bg: BackgroundWriter, f: PendingFile, limit: int = 4 << 20) -> None:
        self.bg, self.f, self.limit = bg, f, limit
        self.items: list[np.ndarray] = []
        self.nbytes = 0

    def add(self, data: np.ndarray | int) -> None:
        if isinstance(data, int):  # written in place by a worker process: keep the order
            self.flush()
            self.bg.put(self.f, data)
            return
        if data.nbytes >= self.limit and not self.items:
            self.bg.put(self.f, data)
            return
        self.items.append(data)
        self.nbytes += data.nbytes
        if self.nbytes >= self.limit:
            self.flush()

    def flush(self) -> None:
        if self.items:
            self.bg.put(self.f, self.items)
            self.items, self.nbytes = [], 0


class SourceReader:
    """One open handle per source file; tensors read in bounded chunks with ``readinto``, each
    chunk a new array (the cast threads and the writer hold several at once), or handed to a
    worker process as byte ranges. ``out_pos``: where the current tensor starts in ``out``."""

    def __init__(
        self, ckpt: Checkpoint, header: Header, chunk_bytes: int, out: PendingFile
    ) -> None:
        self.ckpt, self.path, self.base = ckpt, header.path, header.data_start
        self.chunk = max(8, chunk_bytes // 8 * 8)  # whole elements of every dtype
        self.fh = None
        self.out, self.out_pos = out, out.written  # the header is written already

    def __enter__(self) -> SourceReader:
        try:
            self.fh = open(self.path, "rb", buffering=0)
            self.source = FileId.of(self.path, self.fh.fileno())
        except OSError as e:
            raise CheckpointError(self.path, f"cannot read: {e.strerror or e}") from None
        self.output = FileId.of(self.out.tmp_path, self.out.fd, name=self.out.path)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            self.fh.close()

    def queue(
        self, t: TensorInfo, dst: DType, acc: ErrorAccumulator | None, casts: ChunkCaster
    ) -> Iterator[int]:
        """Queue ``t`` chunk by chunk: copied, cast on a thread, or read, cast and written in
        place by a worker process. Yields each chunk's source bytes."""
        if casts.has_processes and in_process_range(t, dst):
            start, end = self.base + t.start, self.base + t.end
            size_in, size_out = t.dtype.bits // 8, dst.bits // 8
            for pos in range(start, end, self.chunk):
                n = min(self.chunk, end - pos)
                out_offset = self.out_pos + (pos - start) // size_in * size_out
                task = RangeTask(self.source, pos, n, t.dtype.name, dst.name, acc is not None,
                                 self.output, out_offset)  # fmt: skip
                casts.submit_range(task, n // size_in * size_out, acc)
                yield n
            return
        for raw in self.chunks(t):
            if dst == t.dtype:  # copied byte for byte (packed dtypes stay packed)
                casts.copy(raw)
            else:
                casts.submit(raw, t.dtype, dst, acc)
            yield raw.nbytes

    def chunks(self, t: TensorInfo) -> Iterator[np.ndarray]:
        if isinstance(t, StridedTensorInfo):  # gathered into new contiguous arrays
            for chunk in self.ckpt.iter_chunks(t, self.chunk):
                yield chunk.view(np.uint8)
            return
        start, end = self.base + t.start, self.base + t.end
        yield from read_byte_chunks(self.fh, self.path, start, end, self.chunk)


def in_process_range(t: TensorInfo, dst: DType) -> bool:
    """Whether a worker process may cast ``t``: a narrowing cast of a plain byte range
    (gathered pickle views, packed formats and widening casts stay in this process)."""
    return (
        not isinstance(t, StridedTensorInfo)
        and dst.bits < t.dtype.bits
        and not (t.dtype.is_packed or dst.is_packed)
    )


def allow_worker_processes(allowed: bool = True) -> None:
    """Let :func:`cast_processes` start workers on its own in this process.

    A ``spawn``ed worker imports its parent's main script: a script without the
    ``if __name__ == "__main__"`` guard would run its top level again in every worker. So only
    programs whose main module is safe to import call this (``python -m inspector``, the
    installed commands, the bundles); a library caller gets threads unless it passes
    ``processes=`` itself or the user sets :data:`PROCESSES_ENV`.
    """
    global _workers_allowed
    _workers_allowed = allowed


def cast_processes(plan: Sequence[tuple[TensorInfo, DType]]) -> int:
    """Worker processes for ``plan``: one per core (at most :data:`MAX_PROCESSES`) once its
    narrowing casts reach :data:`PROCESS_MIN_BYTES`, in a program that allowed them
    (:func:`allow_worker_processes`); none on one core or without ``pwrite``. The environment
    variable :data:`PROCESSES_ENV` overrides the count (0: threads only)."""
    if not processes_supported():
        return 0
    forced = os.environ.get(PROCESSES_ENV, "").strip()
    if forced:
        if not forced.isdigit():
            raise CheckpointError(None, f"{PROCESSES_ENV} must be a whole number, not {forced!r}")
        return min(int(forced), 64)
    if not _workers_allowed:
        return 0
    work = sum(t.nbytes for t, dst in plan if in_process_range(t, dst))
    cores = usable_cores()
    return min(cores, MAX_PROCESSES) if work >= PROCESS_MIN_BYTES and cores > 1 else 0
