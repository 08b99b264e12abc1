"""One output file being written: a locked temp next to its destination (or in the save's root),
fsynced, then renamed over it. :class:`~.writer.AtomicWriter` commits several together."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import CheckpointError, os_error_reason
from ..layout import TensorEntry
from ..platform import file_io, locks
from ..thread_start import signals_held
from .journal import PARTIAL_SUFFIX
from .tensor_layout import FileLayout, safetensors_layout


def file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


class PendingFile:
    """An output being written to its locked temp file; it becomes ``path`` only on commit.

    ``mode`` (permission bits) is applied to the temp, intersected with what the umask gave it;
    the owner keeps write permission until :meth:`finish` (a cast worker process opens the temp
    by name to write its ranges: a read-only source's 0444 would lock it out).
    """

    def __init__(self, path: str, tmp_folder: str | None = None, mode: int | None = None) -> None:
        self.path = path
        self.folder = tmp_folder or os.path.dirname(path) or "."
        self.tmp_path: str | None = None
        self.fd = -1
        self._final_mode: int | None = None
        try:
            # a SIGTERM between creating the temp and owning it left it behind (the CLI's
            # SIGTERM test caught one): it is raised once the temp is ours to remove
            with signals_held():
                self._create(os.path.basename(path))
            if mode is not None:
                with contextlib.suppress(OSError):
                    self._final_mode = stat.S_IMODE(os.fstat(self.fd).st_mode) & mode
                    file_io.set_mode(self.fd, self._final_mode | stat.S_IWUSR)
        except BaseException:  # the caller never gets this file to discard: done here
            self.discard()
            raise
        self.written = 0
        self.done = False

    def _create(self, base: str) -> None:
        """Create, lock and own a new temp in :attr:`folder`."""
        for _ in range(8):
            tmp = os.path.join(self.folder, f".{base}.{secrets.token_hex(6)}{PARTIAL_SUFFIX}")
            try:
                fd = file_io.create_new(tmp, os.O_WRONLY, 0o666)
            except FileExistsError:
                continue
            except OSError as e:
                raise CheckpointError(
                    self.path, f"cannot write to folder {self.folder}: {os_error_reason(e)}"
                ) from None
            self.tmp_path, self.fd = tmp, fd  # ours from here on: discard() removes it
            # without locks (Windows, some NFS/SMB mounts) the save goes on unlocked
            locks.hold(fd)
            # another save's cleanup may have taken it in the instant before the lock: start over
            try:
                same = os.stat(tmp, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
            except OSError:
                same = False
            if same:
                return
            os.close(fd)
            self.tmp_path, self.fd = None, -1
        raise CheckpointError(self.path, "could not create a temporary file next to it")

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
            raise CheckpointError(self.path, f"cannot write: {os_error_reason(e)}") from None

    def skip(self, nbytes: int) -> None:
        """Count the next ``nbytes`` as written: a cast worker process wrote them in place."""
        try:
            os.lseek(self.fd, nbytes, os.SEEK_CUR)
        except OSError as e:
            raise CheckpointError(self.path, f"cannot write: {os_error_reason(e)}") from None
        self.written += nbytes

    def finish(self) -> None:
        """Flush the data to the disk and close it (the save's ``.txn`` lock still covers it)."""
        if self._final_mode is not None:
            with contextlib.suppress(OSError):  # best effort, as at creation
                file_io.set_mode(self.fd, self._final_mode)
        try:
            file_io.sync_file(self.fd)
        except OSError as e:
            raise CheckpointError(self.path, f"cannot write: {os_error_reason(e)}") from None
        self.close()  # a save of thousands of shards keeps no more than one file open
        self.done = True

    def publish(self) -> None:
        """Rename over the destination (atomic)."""
        try:
            file_io.replace(self.tmp_path, self.path)
        except OSError as e:
            why = file_io.busy_reason(e) or os_error_reason(e)
            raise CheckpointError(self.path, f"cannot replace: {why}") from None
        self.tmp_path = None
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def discard(self) -> None:
        file_io.remove_and_close(self.tmp_path, self.fd)
        self.tmp_path, self.fd = None, -1


class TensorFile(PendingFile):
    """A pending tensor file: its head (header, metadata, padding) first, then exactly the bytes
    its layout promises; each tensor's data starts at ``layout.starts[i]``."""

    def __init__(
        self, path: str, layout: FileLayout, tmp_folder: str | None = None, mode: int | None = None
    ) -> None:
        super().__init__(path, tmp_folder, mode)
        self.layout = layout
        self.expected = layout.size
        try:
            self.write(layout.head)
        except BaseException:
            self.discard()
            raise

    def finish(self) -> None:
        if self.written != self.expected:
            raise RuntimeError(
                f"{self.path}: wrote {self.written} bytes, the header promises {self.expected}"
            )
        super().finish()


class SafetensorsFile(TensorFile):
    """A pending ``.safetensors``: the JSON header, then the tensors back to back."""

    def __init__(
        self,
        path: str,
        entries: Sequence[TensorEntry],
        metadata: Mapping[str, str] | None,
        tmp_folder: str | None = None,
        mode: int | None = None,
    ) -> None:
        super().__init__(path, safetensors_layout(entries, metadata), tmp_folder, mode)
