"""One place where the window's work runs off the GUI thread.

* **Exclusive jobs** (cast, diff) own the progress bar. One runs at a time; another asked for
  meanwhile waits in a one-place queue (the newest request wins the place), never replacing the
  running one. Cancel stops exactly the job the progress bar shows.
* **Requests** (open, statistics, before/after views) are answered in the background; a newer
  request of the same kind makes older answers stale. One generation counter decides (ndv's
  ``_request_data``/``_cancel_futures``): an answer is delivered only if its generation is still
  the latest of its kind.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from .workers import FunctionWorker, JobWorker, Worker, WorkerSet

if TYPE_CHECKING:
    from inspector.core.progress import Progress

Callback = Callable[..., Any]


@dataclass
class _Exclusive:
    kind: str
    label: str
    factory: Callable[[], Generator[Progress, None, Any]]
    on_finished: Callback
    on_errored: Callback
    on_aborted: Callback


class JobRunner(QObject):
    sig_job_started = Signal(str)  # label of the exclusive job now shown
    sig_job_progress = Signal(object)  # Progress of that job
    sig_job_queued = Signal(str)  # label of a job waiting for the running one
    sig_idle = Signal()  # no exclusive job runs or waits

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.workers = WorkerSet(self)
        self._job: Worker | None = None
        self._job_spec: _Exclusive | None = None
        self._queued: _Exclusive | None = None
        self.job_started_at = 0.0  # time.monotonic() when the running exclusive job started
        self._generation = 0
        self._latest: dict[str, int] = {}

    # ---- exclusive jobs -------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self._job is not None

    @property
    def current_kind(self) -> str | None:
        return self._job_spec.kind if self._job_spec is not None else None

    @property
    def queued_kind(self) -> str | None:
        return self._queued.kind if self._queued is not None else None

    def run_exclusive(
        self,
        kind: str,
        label: str,
        factory: Callable[[], Generator[Progress, None, Any]],
        on_finished: Callback,
        on_errored: Callback,
        on_aborted: Callback,
    ) -> Worker | None:
        """Start now (the worker), or queue behind the running job (None)."""
        spec = _Exclusive(kind, label, factory, on_finished, on_errored, on_aborted)
        if self._job is not None:
            self._queued = spec
            self.sig_job_queued.emit(label)
            return None
        return self._start(spec)

    def _start(self, spec: _Exclusive) -> Worker:
        w = JobWorker(spec.factory, name=spec.kind)
        w.progress.connect(self.sig_job_progress)
        w.finished.connect(spec.on_finished)
        w.errored.connect(spec.on_errored)
        w.aborted.connect(spec.on_aborted)
        w.done.connect(self._on_job_done)  # no lambda holding w: it would keep w alive forever
        self._job, self._job_spec = w, spec
        self.job_started_at = time.monotonic()
        self.sig_job_started.emit(spec.label)
        self.workers.start(w)
        return w

    def _on_job_done(self) -> None:
        self._job_done(self.sender())

    def _job_done(self, w: Worker) -> None:
        if w is not self._job:
            return
        self._job = self._job_spec = None
        if self._queued is not None:
            spec, self._queued = self._queued, None
            self._start(spec)
        else:
            self.sig_idle.emit()

    def cancel(self) -> None:
        """Stop the job the progress bar shows (a queued one then starts)."""
        if self._job is not None:
            self._job.cancel()

    def drop(self, kind: str) -> None:
        """Forget every job of ``kind``: a queued one never starts, a running one is cancelled."""
        if self._queued is not None and self._queued.kind == kind:
            self._queued = None
        if self._job is not None and self._job_spec is not None and self._job_spec.kind == kind:
            self._job.cancel()

    # ---- requests -------------------------------------------------------------------------
    def request(
        self,
        kind: str,
        fn: Callable[..., Any],
        *args: Any,
        on_result: Callback,
        on_error: Callback,
        job: bool = False,
    ) -> int:
        """Answer ``fn(*args)`` (or drive the job ``fn()`` returns) in the background.

        Older requests of ``kind`` are cancelled and their answers dropped. Returns the
        generation of this request.
        """
        self._generation += 1
        gen = self._latest[kind] = self._generation
        self.workers.cancel_all(kind)
        w: Worker = JobWorker(fn, name=kind) if job else FunctionWorker(fn, *args, name=kind)
        w.finished.connect(lambda res, k=kind, g=gen: self._deliver(k, g, on_result, res))
        w.errored.connect(lambda e, k=kind, g=gen: self._deliver(k, g, on_error, e))
        self.workers.start(w)
        return gen

    def _deliver(self, kind: str, gen: int, callback: Callback, value: Any) -> None:
        if self._latest.get(kind) == gen:
            callback(value)

    def invalidate(self, *kinds: str) -> None:
        """Answers already on their way for ``kinds`` are stale: drop them, cancel the work."""
        for kind in kinds:
            self._generation += 1
            self._latest[kind] = self._generation
            self.workers.cancel_all(kind)

    def is_latest(self, kind: str, gen: int) -> bool:
        return self._latest.get(kind) == gen

    # ---- shutdown -------------------------------------------------------------------------
    def shutdown(self, msecs: int = 10_000) -> None:
        self._queued = None
        self.workers.cancel_all()
        self.workers.wait(msecs)
