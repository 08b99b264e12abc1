"""Write output data on a second thread while the caller reads and casts (numpy and os.write
release the GIL), with the kernel's writeback started early so the closing fsync waits less."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..platform.file_io import can_write_behind, write_behind
from ..thread_start import signals_held

if TYPE_CHECKING:
    from .writer import PendingFile


KICK_BYTES = 32 << 20  # a file's written range is handed to writeback every this many bytes


class BackgroundWriter:
    """Writes queued arrays to their pending files on one thread while the caller reads and casts.

    The queue is short, so memory stays at a few chunks; ``os.write`` and numpy release the GIL,
    so reading, casting and writing overlap on two cores. Errors surface on the next :meth:`put`
    or on :meth:`close`. Each file's written range is handed to the kernel's writeback at once
    (``sync_file_range``), so the closing ``fsync`` finds little left to flush.
    """

    def __init__(self, depth: int = 3) -> None:
        import queue
        import threading

        self._q: queue.Queue[tuple[PendingFile, np.ndarray | list[np.ndarray] | int] | None]
        self._q = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._kick = KICK_BYTES  # read here: a test lowers it for a small cast
        self._thread = threading.Thread(target=self._run, name="safetensors-writer", daemon=True)
        try:
            with signals_held():
                self._thread.start()
        except BaseException:  # a signal raised right after the start: no thread left behind
            self.stop()
            raise

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
                if isinstance(data, int):  # bytes a cast worker process wrote in place
                    f.skip(data)
                else:
                    for part in data if isinstance(data, list) else (data,):
                        f.write(part)
                if can_write_behind():
                    kicked, waited = flushed.get(id(f), (0, 0))
                    if f.written - kicked >= self._kick:
                        flushed[id(f)] = (f.written, kicked)
                        write_behind(f.fd, kicked, f.written, waited)
            except BaseException as e:  # handed to the caller's thread
                self._error = e

    def _raise(self) -> None:
        if self._error is not None:
            err, self._error = self._error, None
            raise err

    def put(self, f: PendingFile, data: np.ndarray | list[np.ndarray] | int) -> None:
        """Queue ``data`` (an array or a list of them, never modified afterwards) for ``f``; an
        int is that many bytes already written in place (:meth:`PendingFile.skip`)."""
        self._raise()
        self._q.put((f, data))

    def close(self) -> None:
        """Wait for everything queued to be written; re-raise a write error. A Ctrl-C meanwhile
        is raised after: inside the queue's lock it would leave the writer thread waiting
        forever, and an interrupted join marks a running thread stopped (3.11)."""
        with signals_held():
            if self._thread.is_alive():
                self._q.put(None)
                self._thread.join()
        self._raise()

    def stop(self) -> None:
        """Stop without raising (cancel / error path); queued data is dropped."""
        with signals_held():
            if self._thread.is_alive():
                self._error = self._error or RuntimeError("stopped")
                self._q.put(None)
                self._thread.join()
