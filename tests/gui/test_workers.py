"""The job worker's reporting: what the window is told must be what the job did."""

from __future__ import annotations

import time

from inspector.core.progress import Progress
from inspector.gui.workers import JobWorker


def _record(w: JobWorker) -> list[tuple[str, object]]:
    seen: list[tuple[str, object]] = []
    w.finished.connect(lambda r: seen.append(("finished", r)))
    w.aborted.connect(lambda: seen.append(("aborted", None)))
    w.errored.connect(lambda e: seen.append(("errored", e)))
    return seen


def test_a_cancel_that_lands_while_the_job_commits_reports_the_commit(qapp):
    """Cancel clicked after the job's last progress step, while it renamed its output into
    place: the window used to say 'Cast cancelled: nothing was written' over a saved file."""

    def job():
        yield Progress(0, 1, "w")
        w.cancel()  # the click arrives now; the commit below is already under way
        return "committed"

    w = JobWorker(job, name="cast")
    seen = _record(w)
    w.run()  # on this thread: the signals are delivered directly
    assert seen == [("finished", "committed")]


def test_a_cancel_between_steps_stops_the_job_and_runs_its_cleanup(qapp):
    cleaned = []

    def job():
        try:
            yield Progress(0, 2, "w")
            w.cancel()
            yield Progress(1, 2, "w")
            return "committed"  # never reached
        finally:
            cleaned.append(True)

    w = JobWorker(job, name="cast")
    seen = _record(w)
    w.run()
    assert seen == [("aborted", None)] and cleaned == [True]


def test_progress_is_shown_every_50_ms_at_most_and_always_at_the_end(qapp):
    """Steps 80 ms apart are each shown, a burst of quick steps is thinned out, and the last
    step (done == total) is shown whenever it comes."""

    def job():
        for i in range(4):
            yield Progress(i, 10, "w")
            time.sleep(0.08)
        for i in range(4, 11):  # a burst, well inside 50 ms
            yield Progress(i, 10, "w")
        return "done"

    w = JobWorker(job, name="cast")
    shown: list[int] = []
    w.progress.connect(lambda p: shown.append(p.done))
    seen = _record(w)
    w.run()
    assert seen == [("finished", "done")]
    assert shown[:4] == [0, 1, 2, 3] and shown[-1] == 10 and len(shown) < 11
