"""The job runner's one rule for requests: an answer is delivered only while its generation is
the latest of its kind. An older answer already queued for the GUI thread when a newer request
starts, or one made stale by ``invalidate``, never reaches its callback. Exclusive jobs: one runs
(its label on the progress bar), the next waits for it, Cancel stops the running one."""

from __future__ import annotations

import gc
import threading
import time
import weakref

import pytest

from inspector.core.progress import Progress
from inspector.gui.job_runner import JobRunner


@pytest.fixture
def runner(qtbot):
    r = JobRunner()
    yield r
    r.shutdown()


def _finish(qtbot, runner, gen_worker_done) -> None:
    """Wait (GUI thread not spinning) until the pool thread has emitted its answer."""
    deadline = time.monotonic() + 10
    while not gen_worker_done() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert gen_worker_done()


def test_an_answer_queued_before_a_newer_request_is_dropped(qtbot, runner):
    got = []
    release = threading.Event()
    gen_a = runner.request(
        "open", lambda: release.wait() and "A", on_result=got.append, on_error=got.append
    )
    (worker_a,) = runner.workers._running
    assert not worker_a.is_done  # the wait below waits for something
    release.set()
    _finish(qtbot, runner, lambda: worker_a.is_done)  # A's answer waits in the event queue
    gen_b = runner.request("open", lambda: "B", on_result=got.append, on_error=got.append)
    assert gen_b > gen_a and runner.is_latest("open", gen_b) and not runner.is_latest("open", gen_a)
    qtbot.waitUntil(lambda: got == ["B"], timeout=10_000)
    runner.workers.wait()
    qtbot.wait(50)  # every queued answer delivered or dropped by now
    assert got == ["B"]


def test_an_error_of_an_older_request_is_dropped_too(qtbot, runner):
    got = []

    def fail():
        raise ValueError("old")

    runner.request("stats", fail, on_result=got.append, on_error=got.append)
    (worker_a,) = runner.workers._running
    _finish(qtbot, runner, lambda: worker_a.is_done)
    runner.request("stats", lambda: "new", on_result=got.append, on_error=got.append)
    qtbot.waitUntil(lambda: got == ["new"], timeout=10_000)
    qtbot.wait(50)
    assert got == ["new"]


def test_invalidate_drops_answers_on_their_way_and_other_kinds_are_kept(qtbot, runner):
    got = []
    gen = runner.request("stats", lambda: "stats", on_result=got.append, on_error=got.append)
    runner.request("diff", lambda: "diff", on_result=got.append, on_error=got.append)
    runner.invalidate("stats")
    assert not runner.is_latest("stats", gen)
    qtbot.waitUntil(lambda: got == ["diff"], timeout=10_000)
    runner.workers.wait()
    qtbot.wait(50)
    assert got == ["diff"]


def test_the_latest_answer_is_delivered_once(qtbot, runner):
    got = []
    gen = runner.request("open", lambda x: x * 2, 21, on_result=got.append, on_error=got.append)
    assert runner.is_latest("open", gen)
    qtbot.waitUntil(lambda: got == [42], timeout=10_000)
    qtbot.wait(50)
    assert got == [42]


# ---- exclusive jobs: the progress bar's one job, and the one waiting for it -------------------
def test_a_new_runner_runs_nothing(runner):
    assert (runner.busy, runner.current_kind, runner.queued_kind) == (False, None, None)


def _blocking_job(release: threading.Event, result: str):
    """A job that runs until ``release`` is set (its cancel checked between its steps)."""

    def job():
        while not release.is_set():
            yield Progress(0, 1, "")
            time.sleep(0.005)
        return result

    return job


def _exclusive(runner, kind, label, factory, seen):
    return runner.run_exclusive(
        kind,
        label,
        factory,
        on_finished=lambda r: seen.append(("finished", r)),
        on_errored=lambda e: seen.append(("errored", e)),
        on_aborted=lambda: seen.append(("aborted", kind)),
    )


def test_a_job_asked_for_while_one_runs_waits_then_starts_under_its_own_label(qtbot, runner):
    release, seen, signals = threading.Event(), [], []
    runner.sig_job_started.connect(lambda label: signals.append(("started", label)))
    runner.sig_job_queued.connect(lambda label: signals.append(("queued", label)))
    runner.sig_idle.connect(lambda: signals.append(("idle", None)))
    assert _exclusive(runner, "cast", "Casting a", _blocking_job(release, "a"), seen) is not None
    assert _exclusive(runner, "diff", "Comparing", _blocking_job(release, "b"), seen) is None
    assert (runner.current_kind, runner.queued_kind) == ("cast", "diff")
    release.set()
    qtbot.waitUntil(lambda: ("idle", None) in signals, timeout=10_000)
    assert seen == [("finished", "a"), ("finished", "b")]
    assert signals == [
        ("started", "Casting a"),
        ("queued", "Comparing"),
        ("started", "Comparing"),
        ("idle", None),
    ]
    assert not runner.busy and runner.current_kind is None and runner.queued_kind is None


def test_cancel_stops_the_running_job_and_the_waiting_one_starts(qtbot, runner):
    release, seen = threading.Event(), []
    _exclusive(runner, "cast", "Casting", _blocking_job(release, "a"), seen)
    _exclusive(runner, "diff", "Comparing", _blocking_job(release, "b"), seen)
    runner.cancel()  # the cast only: release is never set for it
    qtbot.waitUntil(lambda: runner.current_kind == "diff", timeout=10_000)
    assert seen == [("aborted", "cast")]
    release.set()
    qtbot.waitUntil(lambda: not runner.busy, timeout=10_000)
    assert seen == [("aborted", "cast"), ("finished", "b")]


def test_drop_forgets_the_waiting_job_of_its_kind_only(qtbot, runner):
    release, seen = threading.Event(), []
    _exclusive(runner, "cast", "Casting", _blocking_job(release, "a"), seen)
    _exclusive(runner, "diff", "Comparing", _blocking_job(release, "b"), seen)
    runner.drop("quantize")  # neither runs nor waits: nothing changes
    assert (runner.current_kind, runner.queued_kind) == ("cast", "diff")
    runner.drop("diff")  # the comparison of a checkpoint no longer shown never starts
    assert (runner.current_kind, runner.queued_kind) == ("cast", None)
    release.set()
    qtbot.waitUntil(lambda: not runner.busy, timeout=10_000)
    assert seen == [("finished", "a")]


def test_drop_cancels_the_running_job_of_its_kind_only(qtbot, runner):
    release, seen = threading.Event(), []
    _exclusive(runner, "cast", "Casting", _blocking_job(release, "a"), seen)
    runner.drop("diff")
    qtbot.wait(100)
    assert seen == [] and runner.current_kind == "cast"
    runner.drop("cast")  # never released: only the cancel ends it
    qtbot.waitUntil(lambda: not runner.busy, timeout=10_000)
    assert seen == [("aborted", "cast")]


def test_a_request_made_stale_before_it_started_never_runs(qtbot, runner):
    """With every pool thread busy, "open" A waits for a thread; "open" B replaces it, and A's
    function is never called (a file is not opened twice for one answer)."""
    release, called, got = threading.Event(), [], []
    for i in range(runner.workers.pool.maxThreadCount()):
        runner.request(f"busy{i}", release.wait, on_result=lambda r: None, on_error=got.append)

    def opening(name):
        called.append(name)
        return name

    runner.request("open", opening, "A", on_result=got.append, on_error=got.append)
    runner.request("open", opening, "B", on_result=got.append, on_error=got.append)
    release.set()
    qtbot.waitUntil(lambda: got == ["B"], timeout=10_000)
    runner.workers.wait()
    assert called == ["B"]


def test_shutdown_forgets_the_waiting_job_and_cancels_the_running_one(qtbot, runner):
    release, seen = threading.Event(), []
    _exclusive(runner, "cast", "Casting", _blocking_job(release, "a"), seen)
    _exclusive(runner, "diff", "Comparing", _blocking_job(release, "b"), seen)
    runner.shutdown()  # the window closes
    qtbot.waitUntil(lambda: not runner.busy, timeout=10_000)
    qtbot.wait(100)
    assert seen == [("aborted", "cast")] and runner.queued_kind is None


def test_a_stale_job_request_never_runs_a_step(qtbot, runner):
    """The same for a request answered by a job (before/after views): A's steps never run."""
    release, ran, got = threading.Event(), [], []
    for i in range(runner.workers.pool.maxThreadCount()):
        runner.request(f"busy{i}", release.wait, on_result=lambda r: None, on_error=got.append)

    def job_of(name):
        def job():
            ran.append(name)
            yield Progress(0, 1, name)
            return name

        return job

    for name in ("A", "B"):
        runner.request("views", job_of(name), on_result=got.append, on_error=got.append, job=True)
    release.set()
    qtbot.waitUntil(lambda: got == ["B"], timeout=10_000)
    runner.workers.wait()
    assert ran == ["B"]


def test_the_latest_request_s_error_reaches_its_callback(qtbot, runner):
    results, errors = [], []

    def fail():
        raise ValueError("unreadable")

    runner.request("open", fail, on_result=results.append, on_error=errors.append)
    qtbot.waitUntil(lambda: len(errors) == 1, timeout=10_000)
    qtbot.wait(50)
    assert results == [] and [str(e) for e in errors] == ["unreadable"]


def test_a_finished_request_keeps_nothing_alive(qtbot, runner):
    """What a request's function holds (an open checkpoint) is freed once it answered."""

    class Opening:
        def __call__(self):
            return "opened"

    fn, got = Opening(), []
    freed = weakref.ref(fn)
    runner.request("open", fn, on_result=got.append, on_error=got.append)
    del fn
    qtbot.waitUntil(lambda: got == ["opened"], timeout=10_000)
    runner.workers.wait()
    qtbot.wait(50)  # the worker's last signal delivered
    gc.collect()
    assert freed() is None


def test_a_finished_job_keeps_nothing_alive(qtbot, runner):
    """What a job holds (the checkpoint it casts or compares) is freed once it finished."""

    class Source:
        pass

    source, seen = Source(), []
    freed = weakref.ref(source)

    def job(s):
        yield Progress(0, 1, "")
        return "cast"

    _exclusive(runner, "cast", "Casting", lambda s=source: job(s), seen)
    del source
    qtbot.waitUntil(lambda: not runner.busy, timeout=10_000)
    runner.workers.wait()
    qtbot.wait(50)
    gc.collect()
    assert seen == [("finished", "cast")] and freed() is None


def test_the_runner_and_its_thread_pool_go_with_the_window_that_owns_them(qtbot):
    """A closed window takes its runner, worker set and pool with it (the pool's destructor
    waits for its threads), even while Python still holds references to them."""
    import shiboken6
    from PySide6.QtCore import QObject

    window = QObject()
    runner = JobRunner(window)
    runner.request("open", lambda: "A", on_result=lambda _: None, on_error=lambda _: None)
    workers, pool = runner.workers, runner.workers.pool
    shiboken6.delete(window)
    assert not shiboken6.isValid(runner)
    assert not shiboken6.isValid(workers)
    assert not shiboken6.isValid(pool)
