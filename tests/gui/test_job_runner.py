"""The job runner's one rule for requests: an answer is delivered only while its generation is
the latest of its kind. An older answer already queued for the GUI thread when a newer request
starts, or one made stale by ``invalidate``, never reaches its callback."""

from __future__ import annotations

import time

import pytest

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
    gen_a = runner.request("open", lambda: "A", on_result=got.append, on_error=got.append)
    (worker_a,) = runner.workers._running
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
