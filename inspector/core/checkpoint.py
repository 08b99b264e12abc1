"""Open a checkpoint — one file, a sharded ``*.safetensors.index.json``, or a folder — header only.

Tensor data is never read at open time. :meth:`Checkpoint.view` maps a tensor's bytes through mmap;
:meth:`Checkpoint.iter_chunks` streams them in bounded pieces for jobs that touch every byte.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from .dtypes import DType
from .errors import CheckpointError
from .layout import Header, StridedTensorInfo, TensorInfo
from .platform.mapping import release_pages, track
from .strided import strided_chunks, strided_view
from .wording import _q

if TYPE_CHECKING:
    from .training_layout import TrainingLayout

DEFAULT_CHUNK_BYTES = 8 << 20


@dataclass
class Checkpoint:
    """All tensors of a checkpoint, merged across shards; each tensor knows its file."""

    path: str
    files: list[Header]
    tensors: list[TensorInfo]
    index_path: str | None = None
    index_metadata: dict[str, Any] | None = None
    index: dict[str, Any] | None = field(default=None, repr=False)  # the index as read at open
    folder: str | None = None  # set when opened as a model folder: a cast then writes a folder
    # things a person should know that are not errors (a save journal left in the folder)
    notices: list[str] = field(default_factory=list)
    # a training checkpoint opened as its model's weights: what was recognised and left out
    training: TrainingLayout | None = None
    _by_name: dict[str, TensorInfo] = field(default_factory=dict, repr=False)
    _by_file: dict[str, Header] = field(default_factory=dict, repr=False)
    _maps: dict[str, mmap.mmap] = field(default_factory=dict, repr=False)
    _inodes: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        only = self.files[0].by_name if len(self.files) == 1 else None
        if only is not None and len(only) == len(self.tensors):
            self._by_name = only
        else:
            self._by_name = {t.name: t for t in self.tensors}
        self._by_file = {h.path: h for h in self.files}

    # -- lookup ---------------------------------------------------------------------------
    @property
    def is_sharded(self) -> bool:
        return self.index_path is not None

    @property
    def metadata(self) -> dict[str, Any]:
        """File ``__metadata__`` (single file) or the index's ``metadata`` (sharded)."""
        if self.is_sharded:
            return dict(self.index_metadata or {})
        return dict(self.files[0].metadata or {})

    @property
    def total_nbytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    def __len__(self) -> int:
        return len(self.tensors)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> TensorInfo:
        return self._by_name[name]

    def byte_range(self, tensor: TensorInfo) -> tuple[int, int]:
        """Absolute [start, end) of the tensor's bytes inside its file."""
        base = self._by_file[tensor.file].data_start
        return base + tensor.start, base + tensor.end

    # -- data -----------------------------------------------------------------------------
    def _map(self, path: str) -> mmap.mmap:
        mm = self._maps.get(path)
        if mm is None:
            header = self._by_file[path]
            try:
                with open(path, "rb") as f:
                    header.check_same_file(f.fileno())
                    if os.fstat(f.fileno()).st_size != header.file_size:
                        raise CheckpointError(
                            path, "file changed on disk since it was opened; reopen it"
                        )
                    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                    self._inodes[path] = os.fstat(f.fileno()).st_ino
            except (OSError, ValueError) as e:
                raise CheckpointError(path, f"cannot map the file: {_why(e)}") from None
            self._maps[path] = mm
            track(self)
        return mm

    def release_file(self, path: str) -> bool:
        """Close the map of ``path`` (a save is about to replace it where mapped files cannot
        be replaced); False if a view of it is in use. Its next use reopens and finds it changed."""
        key = os.path.normcase(os.path.abspath(path))
        for p in [p for p in self._maps if os.path.normcase(os.path.abspath(p)) == key]:
            try:
                self._maps[p].close()
            except BufferError:
                return False
            del self._maps[p]
        return True

    def _check_not_truncated(self, path: str) -> None:
        """Touching mapped pages past the end of a file truncated in place kills the process
        (SIGBUS); refuse instead. A file replaced (new inode) or deleted keeps its mapped data."""
        try:
            st = os.stat(path)
        except OSError:
            return
        if st.st_ino == self._inodes.get(path) and st.st_size < self._by_file[path].file_size:
            raise CheckpointError(path, "file was truncated on disk since it was opened; reopen it")

    def view(self, tensor: TensorInfo | str) -> np.ndarray:
        """The tensor as a read-only numpy array over the mmapped file (packed dtypes are unpacked)."""
        t = self[tensor] if isinstance(tensor, str) else tensor
        try:
            if t.nbytes == 0:
                return np.zeros(t.shape, dtype=t.dtype.numpy)
            start, end = self.byte_range(t)
            mm = self._map(t.file)
            self._check_not_truncated(t.file)
            if isinstance(t, StridedTensorInfo):  # a pickle's transposed or sliced tensor
                return strided_view(mm, t)
            if t.dtype.is_packed:
                raw = np.frombuffer(mm, dtype=np.uint8, count=end - start, offset=start)
                return unpack(raw, t.dtype).reshape(t.shape)
            arr = np.frombuffer(mm, dtype=t.dtype.numpy, count=t.numel, offset=start)
            return arr.reshape(t.shape)
        except ValueError:
            # valid safetensors (the reference accepts it), but no numpy array has this shape
            raise CheckpointError(
                t.file,
                f"tensor {_q(t.name)}: shape {_q(list(t.shape))} cannot be shown as an "
                "array (numpy allows at most 64 dimensions and 2**63 bytes)",
            ) from None

    def iter_chunks(
        self, tensor: TensorInfo, chunk_bytes: int = DEFAULT_CHUNK_BYTES
    ) -> Iterator[np.ndarray]:
        """Yield the tensor's elements as flat arrays of at most ``chunk_bytes`` each.

        Reads with ``readinto`` into one reusable buffer, so resident memory stays at one chunk
        however large the file; each yielded array is only valid until the next one is requested.
        """
        dtype = tensor.dtype
        if isinstance(tensor, StridedTensorInfo):  # gathered from the map, a chunk at a time
            yield from strided_chunks(self.view(tensor), max(1, chunk_bytes * 8 // dtype.bits))
            self._release(tensor)
            return
        # whole elements per chunk; packed dtypes need a multiple of 3 bytes (F6) or 1 (F4)
        unit = 3 if dtype.bits == 6 else max(1, dtype.bits // 8)
        chunk = max(unit, chunk_bytes // unit * unit)
        start, end = self.byte_range(tensor)
        buf = np.empty(min(chunk, max(end - start, 0)), dtype=np.uint8)
        try:
            f = open(tensor.file, "rb", buffering=0)  # noqa: SIM115 - closed by the with below
        except OSError as e:
            raise CheckpointError(tensor.file, f"cannot read: {_why(e)}") from None
        with f:
            self._by_file[tensor.file].check_same_file(f.fileno())
            for raw in read_byte_chunks(f, tensor.file, start, end, chunk, buf):
                yield unpack(raw, dtype) if dtype.is_packed else raw.view(dtype.numpy)

    def _release(self, t: StridedTensorInfo) -> None:
        """Drop the mapped pages a strided tensor touched from this process (the page cache keeps
        them): resident memory stays at one tensor's span, not the whole file's."""
        mm = self._maps.get(t.file)
        if mm is not None:
            release_pages(mm, t.start, t.start + t.span_elems * (t.dtype.bits // 8))

    def close(self) -> None:
        for mm in self._maps.values():
            # a numpy view still alive keeps the map open until it is collected
            with contextlib.suppress(BufferError):
                mm.close()
        self._maps.clear()

    def __enter__(self) -> Checkpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_byte_chunks(
    fh: BinaryIO, path: str, start: int, end: int, chunk: int, buf: np.ndarray | None = None
) -> Iterator[np.ndarray]:
    """Bytes ``[start, end)`` of an open unbuffered file as uint8 arrays of at most ``chunk``.

    With ``buf`` every chunk is read into it (valid until the next one: memory stays at one
    chunk, which mmap would not give); without, each chunk is a new array that may be kept.
    """
    try:
        fh.seek(start)
    except OSError as e:  # a disk error is the file's, not standard output's (the CLI's guess)
        raise CheckpointError(path, f"cannot read: {_why(e)}") from None
    pos = start
    while pos < end:
        n = min(chunk, end - pos)
        arr = buf[:n] if buf is not None else np.empty(n, dtype=np.uint8)
        _fill(fh, path, memoryview(arr))
        pos += n
        yield arr


def _fill(fh: BinaryIO, path: str, view: memoryview) -> None:
    """Read exactly ``len(view)`` bytes into ``view``; a short file or a disk error is named."""
    got = 0
    try:
        while got < len(view):
            more = fh.readinto(view[got:])
            if not more:
                raise CheckpointError(
                    path, "file is shorter than its header says (truncated while reading)"
                )
            got += more
    except OSError as e:
        raise CheckpointError(path, f"cannot read: {_why(e)}") from None


def unpack(raw: np.ndarray, dtype: DType) -> np.ndarray:
    """Unpack sub-byte floats (F4: two per byte, low nibble first; F6: four per 3 bytes, LSB first)."""
    if dtype.bits == 4:
        out = np.empty(raw.size * 2, dtype=np.uint8)
        out[0::2] = raw & 0x0F
        out[1::2] = raw >> 4
    elif dtype.bits == 6:
        b = raw.reshape(-1, 3).astype(np.uint32)
        word = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        out = np.empty((b.shape[0], 4), dtype=np.uint8)
        for i in range(4):
            out[:, i] = (word >> (6 * i)) & 0x3F
        out = out.reshape(-1)
    else:
        raise ValueError(f"{dtype.name} is not a packed dtype")
    return out.view(dtype.numpy)


def _why(e: BaseException) -> str:
    return (getattr(e, "strerror", None) or str(e) or type(e).__name__).rstrip(".")


__all__ = [
    "Checkpoint",
    "read_byte_chunks",
    "unpack",
]
