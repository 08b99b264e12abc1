"""What a cast worker process runs: read a byte range of the source, cast it, write it in place.

Python threads do not make two cores of the cast: numpy's short passes hand the GIL back and
forth (docs/benchmarks.md). So a large cast runs in worker processes, each handed a location,
never bytes. It maps its range read-only, casts and measures it, and ``pwrite``s the result
at its offset in the pending temp file; only the measurement travels back. The caller keeps
everything else: the order, the writeback, the fsync and the commit.

Files are opened by path, so each open checks the identity (device and inode) the caller
passed. A source replaced on disk since the caller opened it is refused, never mixed in, and
nothing is ever written anywhere but the caller's own temp file.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

import numpy as np

from ..dtypes import DTYPES
from ..errors import CheckpointError, os_error_reason
from ..platform.file_io import pwrite_all, start_writeback
from ..platform.mapping import read_only_map
from .chunk import cast_chunk
from .precision import ErrorAccumulator


@dataclass(frozen=True)
class FileId:
    """A file as the caller holds it open: ``path`` (for opening, and for messages: ``name``)
    and the identity the worker's own open must find there."""

    path: str
    device: int
    inode: int
    name: str

    @classmethod
    def of(cls, path: str, fd: int, name: str | None = None) -> FileId:
        st = os.fstat(fd)
        return cls(path, st.st_dev, st.st_ino, path if name is None else name)


@dataclass(frozen=True)
class RangeTask:
    """Cast bytes ``[start, start + nbytes)`` of ``source`` from ``src`` to ``dst`` and write
    them at ``out_offset`` of ``output``."""

    source: FileId
    start: int
    nbytes: int
    src: str
    dst: str
    report: bool
    output: FileId
    out_offset: int


class _Open:
    """The worker's one open descriptor per role, reopened when the task names another file."""

    def __init__(self, flags: int) -> None:
        self.flags = flags
        self.file: FileId | None = None
        self.fd = -1

    def fd_for(self, file: FileId) -> int:
        if file == self.file:
            return self.fd
        self.close()
        fd = os.open(file.path, self.flags | getattr(os, "O_CLOEXEC", 0))
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (file.device, file.inode):
            os.close(fd)
            raise _Replaced
        self.file, self.fd = file, fd
        return fd

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
        self.file, self.fd = None, -1


class _Replaced(Exception):
    pass


_source, _output = _Open(os.O_RDONLY), _Open(os.O_WRONLY)


def cast_range(task: RangeTask) -> ErrorAccumulator | None:
    """Do ``task``; return its measurement (None without ``report``). Errors name the file."""
    src, dst = DTYPES[task.src], DTYPES[task.dst]
    acc = ErrorAccumulator(src, dst) if task.report else None
    with _mapped(task.source, task.start, task.nbytes) as raw:
        out, part = cast_chunk(raw, src, dst, acc)
        del raw  # the map closes only once no array looks into it
    _write(task.output, out, task.out_offset)
    return part


@contextmanager
def _mapped(source: FileId, start: int, nbytes: int) -> Iterator[np.ndarray]:
    """Bytes ``[start, start + nbytes)`` of ``source``, mapped read-only.

    Mapped pages past the end of a file truncated in place kill the process (SIGBUS), so the
    size is checked first; a truncation in the millisecond the range is in use still kills
    this worker, which the caller reports (:mod:`.cast_pool`).
    """
    try:
        fd = _source.fd_for(source)
        if os.fstat(fd).st_size < start + nbytes:
            raise CheckpointError(
                source.name, "file is shorter than its header says (truncated while reading)"
            )
        base = start - start % mmap.ALLOCATIONGRANULARITY
        # pages faulted in by the map call itself where it can (MAP_POPULATE): a quarter of the
        # time of copying them out with readv (0.35 vs 1.4 ms per 8 MiB; docs/benchmarks.md)
        m = read_only_map(fd, start + nbytes - base, base)
    except _Replaced:
        raise CheckpointError(
            source.name, "file was replaced on disk while it was being cast"
        ) from None
    except OSError as e:
        raise CheckpointError(source.name, f"cannot read: {os_error_reason(e)}") from None
    try:
        yield np.frombuffer(m, np.uint8, nbytes, start - base)
    finally:
        with suppress(BufferError):  # an array of it outlived the cast (an error on the way):
            m.close()  # the map closes when that array goes


def _write(output: FileId, data: np.ndarray, offset: int) -> None:
    try:
        fd = _output.fd_for(output)
        done = pwrite_all(fd, memoryview(data).cast("B"), offset)
        start_writeback(fd, offset, done)  # the caller's write-behind waits for it later
    except _Replaced:  # another process's cleanup took the temp: this save is over
        raise CheckpointError(
            output.name, "its temporary file was removed during the save"
        ) from None
    except OSError as e:
        raise CheckpointError(output.name, f"cannot write: {os_error_reason(e)}") from None
