"""How a cast moves its bytes: source chunks read (or handed to worker processes as ranges),
output written in order through the background writer, and how many processes to start."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from ..checkpoint import Checkpoint, read_byte_chunks
from ..dtypes import DType
from ..errors import CheckpointError
from ..gguf_names import unpermute_rows
from ..layout import Header, StridedTensorInfo, TensorInfo
from ..save.pending_file import PendingFile
from ..save.writeback import BackgroundWriter
from .pool import ChunkCaster
from .precision import ErrorAccumulator
from .worker import FileId, RangeTask
from .worker_policy import processes_for


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
        self,
        ckpt: Checkpoint,
        header: Header,
        chunk_bytes: int,
        out: PendingFile,
        head_rows: Mapping[str, int] | None = None,
    ) -> None:
        self.head_rows = head_rows or {}  # GGUF's permuted Q/K: rows put back, a head at a time
        self.ckpt, self.header, self.path, self.base = ckpt, header, header.path, header.data_start
        self.chunk = max(8, chunk_bytes // 8 * 8)  # whole elements of every dtype
        self.fh = None
        self.out, self.out_pos = out, out.written  # the caller sets it per tensor

    def __enter__(self) -> SourceReader:
        try:
            self.fh = open(self.path, "rb", buffering=0)
            self.header.check_same_file(self.fh.fileno())  # not a same-size replacement
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
        if casts.has_processes and in_process_range(t, dst) and t.name not in self.head_rows:
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
        raw = read_byte_chunks(self.fh, self.path, start, end, self.chunk)
        heads = self.head_rows.get(t.name)
        if heads:  # whole heads of rows (bytes), put back in the HF order
            row = t.nbytes // max(1, t.shape[0])
            raw = (c.view(np.uint8) for c in unpermute_rows(raw, row, heads))
        yield from raw


def in_process_range(t: TensorInfo, dst: DType) -> bool:
    """Whether a worker process may cast ``t``: a narrowing cast of a plain byte range
    (gathered pickle views, packed formats and widening casts stay in this process)."""
    return (
        not isinstance(t, StridedTensorInfo)
        and dst.bits < t.dtype.bits
        and not (t.dtype.is_packed or dst.is_packed)
    )


def cast_processes(plan: Sequence[tuple[TensorInfo, DType]]) -> int:
    """Worker processes for ``plan``: as many as :func:`.worker_policy.processes_for` gives
    its narrowing casts of plain byte ranges."""
    return processes_for(sum(t.nbytes for t, dst in plan if in_process_range(t, dst)))
