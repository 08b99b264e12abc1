"""A signal whose handler raises (Ctrl-C, the CLI's SIGTERM) arriving while the cast starts a
thread stops the cast cleanly: no temp file, no thread traceback on stderr (found when a SIGTERM
test printed ``KeyError`` from ``threading._bootstrap_inner``)."""

from __future__ import annotations

import os
import signal
import sys
import threading

import numpy as np
import pytest
from safetensors.numpy import save_file

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.thread_start import signals_held

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="POSIX signals")


class Stopped(Exception):
    pass


@pytest.fixture
def raising_sigterm():
    def handler(signum, _frame):
        raise Stopped(signum)

    old = signal.signal(signal.SIGTERM, handler)
    yield
    signal.signal(signal.SIGTERM, old)


def test_a_signal_inside_the_block_is_raised_after_it(raising_sigterm):
    reached_end = False
    with pytest.raises(Stopped), signals_held():
        signal.raise_signal(signal.SIGTERM)
        reached_end = True
    assert reached_end
    assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # the handler is back


def test_a_signal_while_a_thread_starts_stops_the_cast_cleanly(
    tmp_path, monkeypatch, raising_sigterm
):
    save_file(
        {f"t{i}": np.ones(100_000, np.float32) for i in range(3)}, str(tmp_path / "a.safetensors")
    )
    unraisable: list[object] = []  # what a thread dying in its bootstrap reports
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    started: list[threading.Thread] = []
    real_start = threading._start_new_thread

    def start_then_signal(bootstrap, *args):
        ident = real_start(bootstrap, *args)  # the moment of the race: the thread exists
        started.append(bootstrap.__self__)
        signal.raise_signal(signal.SIGTERM)
        return ident

    monkeypatch.setattr(threading, "_start_new_thread", start_then_signal)
    with open_checkpoint(tmp_path / "a.safetensors") as ckpt, pytest.raises(Stopped):
        run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(tmp_path / "o.safetensors")))
    monkeypatch.setattr(threading, "_start_new_thread", real_start)
    assert started
    for t in started:
        try:
            t.join(timeout=10)  # a bound on a leak, not a speed requirement
        except RuntimeError:  # "cannot join thread before it is started"
            pytest.fail(f"the signal broke off the start of {t.name}")
        assert not t.is_alive(), f"{t.name} was left running"
    assert unraisable == []
    assert sorted(os.listdir(tmp_path)) == ["a.safetensors"]


@pytest.mark.parametrize("when", ["created", "locked"])
def test_a_signal_just_after_a_temp_is_created_leaves_no_temp(
    tmp_path, monkeypatch, raising_sigterm, when
):
    """The CLI's SIGTERM test found a ``.partial`` left: the signal landed between the temp's
    creation and the writer owning it."""
    from inspector.core.platform import file_io, locks

    save_file({"t": np.ones(1000, np.float32)}, str(tmp_path / "a.safetensors"))
    owner, name = (file_io, "create_new") if when == "created" else (locks, "hold")
    real = getattr(owner, name)

    def then_signal(*args):
        result = real(*args)
        signal.raise_signal(signal.SIGTERM)
        return result

    monkeypatch.setattr(owner, name, then_signal)
    with open_checkpoint(tmp_path / "a.safetensors") as ckpt, pytest.raises(Stopped):
        run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(tmp_path / "o.safetensors")))
    assert sorted(os.listdir(tmp_path)) == ["a.safetensors"]
