"""Run core jobs off the GUI thread.

A core job is a generator that yields :class:`~inspector.core.progress.Progress` and returns its
result. :class:`JobWorker` drives one on a ``QThreadPool`` thread and reports through Qt signals
(queued back to the GUI thread): ``progress``, ``finished(result)``, ``errored(exc)``, ``aborted``,
and always ``done`` last. Cancel is cooperative: the flag is checked between yields, then the
generator is ``close()``-d so its ``finally`` blocks (temp-file cleanup) run on the worker thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal

from inspector.core.progress import Progress


class Worker(QObject):
    """Base: signals plus a cancel flag. Subclasses implement :meth:`_work`.

    ``drops_late_results``: whether a result that arrives after a cancel is dropped (a read
    that nobody wants any more), or delivered because it already happened (a job that wrote).
    """

    drops_late_results = True

    progress = Signal(object)  # Progress
    finished = Signal(object)  # result
    errored = Signal(object)  # the exception
    aborted = Signal()
    done = Signal()  # always emitted last, whatever happened

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name  # its kind: what ``WorkerSet.cancel_all(kind)`` matches
        self._cancel = False
        self.is_done = False

    def cancel(self) -> None:
        self._cancel = True

    def start(self, pool: QThreadPool) -> Worker:
        pool.start(self.run)
        return self

    def run(self) -> None:
        try:
            result = self._work()
        except _Aborted:
            self.aborted.emit()
        except Exception as e:  # reported to the GUI, never swallowed
            if self._cancel:
                self.aborted.emit()
            else:
                self.errored.emit(e)
        else:
            if self._cancel and self.drops_late_results:
                self.aborted.emit()
            else:
                self.finished.emit(result)
        finally:
            self.is_done = True
            self.done.emit()

    def _work(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


class _Aborted(Exception):
    pass


class FunctionWorker(Worker):
    """Call ``fn(*args)`` on a pool thread; a cancelled call's result is dropped."""

    def __init__(self, fn: Callable[..., Any], *args: Any, name: str) -> None:
        super().__init__(name)
        self._fn = fn
        self._args = args

    def _work(self) -> Any:
        if self._cancel:
            raise _Aborted
        return self._fn(*self._args)


class JobWorker(Worker):
    """Drive a core job (generator of Progress returning a result), with throttled progress.

    A job that ran to its end reports ``finished`` even when Cancel came during its last step:
    a cast commits there, and "nothing was written" would then be false.
    """

    drops_late_results = False

    def __init__(
        self,
        job_factory: Callable[[], Generator[Progress, None, Any]],
        name: str,
        min_interval: float = 0.05,
    ) -> None:
        super().__init__(name)
        self._factory = job_factory
        self._min_interval = min_interval

    def _work(self) -> Any:
        job = self._factory()
        last = 0.0
        try:
            while True:
                if self._cancel:
                    job.close()  # runs the job's cleanup (e.g. removes the temp file)
                    raise _Aborted
                try:
                    p = next(job)
                except StopIteration as stop:
                    return stop.value
                now = time.monotonic()
                if now - last >= self._min_interval or p.done >= p.total:
                    last = now
                    self.progress.emit(p)
        finally:
            job.close()


class WorkerSet(QObject):
    """Keeps running workers alive until they are done; one pool per window."""

    def __init__(self, parent: QObject | None = None, max_threads: int = 3) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads)
        self._running: set[Worker] = set()

    def start(self, worker: Worker) -> Worker:
        self._running.add(worker)
        # a slot of this object, not a lambda holding the worker: Qt keeps a connection's lambda
        # as long as the worker lives, so the worker (and all its function holds) never died
        worker.done.connect(self._on_done)
        worker.start(self.pool)
        return worker

    def _on_done(self) -> None:
        self._running.discard(self.sender())  # a queued call: the worker may go now

    def cancel_all(self, name: str | None = None) -> None:
        for w in list(self._running):
            if name is None or w.name == name:
                w.cancel()

    def wait(self, msecs: int = 10_000) -> bool:
        return self.pool.waitForDone(msecs)
