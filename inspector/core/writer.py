"""Write safetensors files so that nothing is ever lost: a crash or cancel leaves the old file.

Each output is streamed into ``.<final-name>.<random>.partial`` in the target folder, held with an
exclusive ``flock`` while written, ``fsync``-ed, renamed over the destination with ``os.replace``,
and the folder is ``fsync``-ed so the rename itself survives a power cut. A save first deletes any
``.*.partial`` in its folder that nobody holds locked: the leftover of a killed save.
Several files (shards and their index) are committed together: all temps complete first, then
renamed, the index last.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .dtypes import DType
from .errors import CheckpointError

try:
    import fcntl
except ImportError:  # Windows: no flock, so temps are unlocked and leftovers are never guessed at
    fcntl = None  # type: ignore[assignment]

PARTIAL_SUFFIX = ".partial"
# only names this writer makes: ".<final-name>.<12 hex digits>.partial"
_PARTIAL_NAME = re.compile(r"\..+\.[0-9a-f]{12}" + re.escape(PARTIAL_SUFFIX))


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of an output file, in header (= data) order."""

    name: str
    dtype: DType
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return self.dtype.nbytes(n)


def encode_header(entries: Sequence[TensorEntry], metadata: Mapping[str, str] | None) -> bytes:
    """The 8-byte length and JSON header, space-padded to a multiple of 8 as the reference writer.

    Tensors keep the given order and their data is laid out in that order, contiguously from 0.
    """
    header: dict[str, object] = {}
    if metadata is not None:
        header["__metadata__"] = dict(metadata)
    offset = 0
    for e in entries:
        if e.name in header:
            raise ValueError(f"tensor name {e.name!r} appears twice")
        end = offset + e.nbytes
        header[e.name] = {
            "dtype": e.dtype.name,
            "shape": list(e.shape),
            "data_offsets": [offset, end],
        }
        offset = end
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text


# -- leftovers from killed saves ----------------------------------------------------------------


def is_partial_name(name: str) -> bool:
    """A temp this writer made (never some other tool's ``.foo.partial``)."""
    return _PARTIAL_NAME.fullmatch(name) is not None


def clean_leftovers(folder: str) -> list[str]:
    """Delete every ``.*.partial`` in ``folder`` that no live save holds locked; return their paths."""
    removed: list[str] = []
    if fcntl is None:
        return removed  # without locks a leftover cannot be told from a live save
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        if not is_partial_name(name):
            continue
        path = os.path.join(folder, name)
        try:
            # O_NONBLOCK: a FIFO of that name must not hang the save
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a save in progress holds it
            with contextlib.suppress(OSError):
                if os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                    os.unlink(path)
                    removed.append(path)
        finally:
            os.close(fd)
    return removed


# -- one output file ---------------------------------------------------------------------------


def _reason(e: OSError) -> str:
    if e.errno == errno.ENOSPC:
        return "no space left on the disk"
    if e.errno == errno.EDQUOT:
        return "disk quota exceeded"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if e.errno == errno.EROFS:
        return "the disk is read-only"
    return e.strerror or str(e)


class PendingFile:
    """An output being written to its locked temp file; it becomes ``path`` only on commit."""

    def __init__(self, path: str) -> None:
        self.path = path
        folder, base = os.path.split(path)
        self.folder = folder or "."
        for _ in range(8):
            tmp = os.path.join(self.folder, f".{base}.{secrets.token_hex(6)}{PARTIAL_SUFFIX}")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            except FileExistsError:
                continue
            except OSError as e:
                raise CheckpointError(
                    path, f"cannot write to folder {self.folder}: {_reason(e)}"
                ) from None
            # A filesystem without locks (some NFS/SMB mounts) refuses flock: save unlocked.
            # Cleanup cannot lock such temps either, so it never takes this live one.
            if fcntl is not None:
                with contextlib.suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_EX)
            # another save's cleanup may have taken it in the instant before the lock: start over
            try:
                same = os.stat(tmp, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
            except OSError:
                same = False
            if same:
                self.tmp_path, self.fd = tmp, fd
                break
            os.close(fd)
        else:
            raise CheckpointError(path, "could not create a temporary file next to it")
        self.written = 0
        self.done = False

    def write(self, data: bytes | bytearray | memoryview | np.ndarray) -> None:
        """Append all of ``data`` (arrays are written as their raw bytes, in C order)."""
        if isinstance(data, np.ndarray):
            data = np.ascontiguousarray(data).reshape(-1).view(np.uint8).data
        view = memoryview(data).cast("B")
        try:
            while view:
                n = os.write(self.fd, view)
                view = view[n:]
                self.written += n
        except OSError as e:
            raise CheckpointError(self.path, f"cannot write: {_reason(e)}") from None

    def finish(self) -> None:
        """Flush the data to the disk; the file is complete but still under its temp name."""
        try:
            os.fsync(self.fd)
        except OSError as e:
            raise CheckpointError(self.path, f"cannot write: {_reason(e)}") from None
        self.done = True

    def publish(self) -> None:
        """Rename over the destination (atomic); the lock goes with the closed descriptor."""
        try:
            os.replace(self.tmp_path, self.path)
        except OSError as e:
            raise CheckpointError(self.path, f"cannot replace: {_reason(e)}") from None
        self.tmp_path = None
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def discard(self) -> None:
        if self.tmp_path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp_path)
            self.tmp_path = None
        self.close()


class SafetensorsFile(PendingFile):
    """A pending ``.safetensors``: header first, then exactly the bytes the header promises."""

    def __init__(
        self, path: str, entries: Sequence[TensorEntry], metadata: Mapping[str, str] | None
    ) -> None:
        super().__init__(path)
        try:
            head = encode_header(entries, metadata)
            self.expected = len(head) + sum(e.nbytes for e in entries)
            self.write(head)
        except BaseException:
            self.discard()
            raise

    def finish(self) -> None:
        if self.written != self.expected:
            raise RuntimeError(
                f"{self.path}: wrote {self.written} bytes, the header promises {self.expected}"
            )
        super().finish()


def _fsync_dir(folder: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _same_file(a: str, b: str) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


class AtomicWriter:
    """A set of output files that appear together on :meth:`commit`, or not at all.

    Use as a context manager: leaving it by an exception (``GeneratorExit`` of a cancelled job
    included) or without a commit removes every temp file and leaves destinations untouched.
    ``protect`` lists input files an output must never replace.
    """

    def __init__(self, protect: Iterable[str] = ()) -> None:
        self.protect = [os.fspath(p) for p in protect]
        self.pending: list[PendingFile] = []
        self.created_dirs: list[str] = []
        self._cleaned: set[str] = set()
        self.committed = False

    def __enter__(self) -> AtomicWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.committed:
            self.abort()

    def make_folder(self, folder: str) -> None:
        """Create an output folder whose parent exists; it is removed again on abort."""
        if os.path.isdir(folder):
            return
        parent = os.path.dirname(os.path.abspath(folder))
        if not os.path.isdir(parent):
            raise CheckpointError(folder, f"folder {parent} does not exist")
        try:
            os.mkdir(folder)
        except OSError as e:
            raise CheckpointError(folder, f"cannot create folder: {_reason(e)}") from None
        self.created_dirs.append(folder)

    def _check_target(self, path: str) -> None:
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise CheckpointError(path, f"folder {folder} does not exist")
        if os.path.isdir(path):
            raise CheckpointError(path, "is a folder; give a file name to write")
        for src in self.protect:
            if _same_file(path, src):
                raise CheckpointError(
                    path,
                    "is the input file; choose another output (the input is read while writing)",
                )
        if any(p.path == path for p in self.pending):
            raise CheckpointError(path, "is written twice in one save")
        if folder not in self._cleaned:
            clean_leftovers(folder)
            self._cleaned.add(folder)

    def open(self, path: str) -> PendingFile:
        self._check_target(path)
        f = PendingFile(path)
        self.pending.append(f)
        return f

    def open_safetensors(
        self, path: str, entries: Sequence[TensorEntry], metadata: Mapping[str, str] | None
    ) -> SafetensorsFile:
        self._check_target(path)
        f = SafetensorsFile(path, entries, metadata)
        self.pending.append(f)
        return f

    def write_text(self, path: str, text: str) -> None:
        f = self.open(path)
        f.write(text.encode("utf-8"))
        f.finish()

    def commit(self) -> None:
        """Finish what is unfinished, then rename every file in the order opened; fsync folders."""
        try:
            for f in self.pending:
                if not f.done:
                    f.finish()
            for f in self.pending:
                f.publish()
        except BaseException:
            self.abort()
            raise
        for folder in {f.folder for f in self.pending}:
            _fsync_dir(folder)
        for d in self.created_dirs:
            _fsync_dir(os.path.dirname(os.path.abspath(d)))
        self.committed = True

    def abort(self) -> None:
        for f in self.pending:
            f.discard()
        self.pending.clear()
        for d in reversed(self.created_dirs):
            with contextlib.suppress(OSError):
                os.rmdir(d)  # only if empty: a folder we made holds nothing of anyone else
        self.created_dirs.clear()


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Replace ``path`` with ``text`` durably (reports, indexes): old content or new, never half."""
    with AtomicWriter() as w:
        w.write_text(os.fspath(path), text)
        w.commit()


def save_arrays(
    path: str | os.PathLike[str],
    tensors: Sequence[tuple[str, DType, np.ndarray]],
    metadata: Mapping[str, str] | None = None,
) -> None:
    """Write small arrays as one safetensors file, atomically (tests, fixtures, tools)."""
    if any(d.is_packed for _, d, _ in tensors):
        raise ValueError("save_arrays does not pack sub-byte dtypes")
    entries = [TensorEntry(n, d, tuple(a.shape)) for n, d, a in tensors]
    with AtomicWriter() as w:
        f = w.open_safetensors(os.fspath(path), entries, metadata)
        for _, d, a in tensors:
            f.write(np.ascontiguousarray(a, dtype=d.numpy))
        w.commit()


# -- writing on a second thread ----------------------------------------------------------------


def _load_sync_file_range():
    """Linux ``sync_file_range``: start writing dirty pages now so the final fsync waits less."""
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.sync_file_range
        fn.argtypes = (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint)
        fn.restype = ctypes.c_int
        return fn
    except (OSError, AttributeError):
        return None


_SYNC_FILE_RANGE = _load_sync_file_range()
_SFR_WAIT_BEFORE, _SFR_WRITE, _SFR_WAIT_AFTER = 1, 2, 4


def _write_behind(fd: int, start: int, end: int, older: int) -> None:
    """Start writeback of [start, end) and wait for [older, start) to reach the disk.

    Keeps the disk busy from the first chunk on and the dirty page cache bounded at two
    ranges, instead of one huge flush at fsync time (and the kernel throttling our writes).
    """
    _SYNC_FILE_RANGE(fd, start, end - start, _SFR_WRITE)
    if start > older:
        _SYNC_FILE_RANGE(fd, older, start - older, _SFR_WAIT_BEFORE | _SFR_WRITE | _SFR_WAIT_AFTER)
        with contextlib.suppress(OSError, AttributeError):
            os.posix_fadvise(fd, older, start - older, os.POSIX_FADV_DONTNEED)


class BackgroundWriter:
    """Writes queued arrays to their pending files on one thread while the caller reads and casts.

    The queue is short, so memory stays at a few chunks; ``os.write`` and numpy release the GIL,
    so reading, casting and writing overlap on two cores. Errors surface on the next :meth:`put`
    or on :meth:`close`. Each file's written range is handed to the kernel's writeback at once
    (``sync_file_range``), so the closing ``fsync`` finds little left to flush.
    """

    def __init__(self, depth: int = 3, kick_bytes: int = 32 << 20) -> None:
        import queue
        import threading

        self._q: queue.Queue[tuple[PendingFile, np.ndarray | list[np.ndarray]] | None]
        self._q = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._kick = kick_bytes
        self._thread = threading.Thread(target=self._run, name="safetensors-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        flushed: dict[int, tuple[int, int]] = {}  # per file: (kicked up to, waited up to)
        while True:
            item = self._q.get()
            if item is None:
                return
            if self._error is not None:
                continue  # drain until told to stop
            f, data = item
            try:
                for part in data if isinstance(data, list) else (data,):
                    f.write(part)
                if _SYNC_FILE_RANGE is not None:
                    kicked, waited = flushed.get(id(f), (0, 0))
                    if f.written - kicked >= self._kick:
                        flushed[id(f)] = (f.written, kicked)
                        _write_behind(f.fd, kicked, f.written, waited)
            except BaseException as e:  # handed to the caller's thread
                self._error = e

    def _raise(self) -> None:
        if self._error is not None:
            err, self._error = self._error, None
            raise err

    def put(self, f: PendingFile, data: np.ndarray | list[np.ndarray]) -> None:
        """Queue ``data`` (an array or a list of them, never modified afterwards) for ``f``."""
        self._raise()
        self._q.put((f, data))

    def close(self) -> None:
        """Wait for everything queued to be written; re-raise a write error."""
        if self._thread.is_alive():
            self._q.put(None)
            self._thread.join()
        self._raise()

    def stop(self) -> None:
        """Stop without raising (cancel / error path); queued data is dropped."""
        if self._thread.is_alive():
            self._error = self._error or RuntimeError("stopped")
            self._q.put(None)
            self._thread.join()
