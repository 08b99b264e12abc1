"""main() in the surroundings a program may give it: standard streams that cannot be reconfigured
(a notebook's, a closed one, a full disk behind stdout), a system that refuses signal handlers,
and the stop exceptions copied the way any exception may be. Gaps of the round-3 mutation run
of inspector/cli/ (output.make_streams_safe, signals)."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import pickle
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

from inspector.cli import dispatch, main
from inspector.cli.signals import StoppedAfterWriting, Terminated
from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays

LISTING = [
    "name  dtype    shape                      size  status",
    "ids   I64      [3]                        24 B  kept (not a float)",
    "w     F32      [2]                         8 B",
    "0 of 2 tensors differ from F32 · 5 params · 32 B · I64×1",
]


@pytest.fixture
def src(tmp_path) -> Path:
    p = tmp_path / "m.safetensors"
    save_arrays(
        p, [("w", DTYPES["F32"], np.ones(2, np.float32)), ("ids", DTYPES["I64"], np.arange(3))]
    )
    return p


# -- the standard streams -------------------------------------------------------------------------


def test_a_stdout_without_reconfigure_gets_the_listing(src, monkeypatch):
    """A notebook's or an IDE's stdout is not a TextIOWrapper: it has no reconfigure() to ask
    for escapes, and the command writes to it as it is."""
    stdout = io.StringIO()
    monkeypatch.setattr("sys.stdout", stdout)
    assert main(["list", str(src)]) == 0
    assert stdout.getvalue().splitlines() == LISTING


def test_a_closed_stderr_does_not_stop_a_command_that_has_nothing_to_say_there(
    src, capsys, monkeypatch
):
    """reconfigure() of a closed stream raises ValueError: stdout still gets the listing."""
    closed = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    closed.close()
    monkeypatch.setattr("sys.stderr", closed)
    assert main(["list", str(src)]) == 0
    assert capsys.readouterr().out.splitlines() == LISTING


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_behind_stdout_with_text_pending_is_one_line(src, capsys, monkeypatch):
    """reconfigure() flushes what the program had written: on a full disk that raises OSError
    before the command starts; the command then says it on stderr, as for its own lines."""
    full = io.TextIOWrapper(open("/dev/full", "wb"), encoding="utf-8")  # noqa: SIM115
    full.write("the program's own line\n")  # pending in the wrapper: reconfigure() flushes it
    monkeypatch.setattr("sys.stdout", full)
    try:
        code = main(["list", str(src)])
    finally:
        if sys.stdout is not full:  # main() silenced it with os.devnull for the exit's flush
            sys.stdout.close()
        with contextlib.suppress(OSError):
            full.close()  # its buffer cannot be flushed either
    assert code == 2
    assert capsys.readouterr().err == (
        "checkpoint-inspector: error: standard output: cannot write: No space left on device\n"
    )


# -- the window ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("platform", "env", "screenshot"),
    [
        ("linux", {"DISPLAY": ":0"}, None),
        ("linux", {"WAYLAND_DISPLAY": "wayland-0"}, None),
        ("linux", {"QT_QPA_PLATFORM": "offscreen"}, None),
        ("win32", {}, None),
        ("darwin", {}, None),
        ("linux", {}, "shot.png"),  # rendered offscreen: no display needed
    ],
    ids=["X11", "Wayland", "QT_QPA_PLATFORM", "Windows", "macOS", "screenshot-without-display"],
)
def test_the_window_starts_where_it_can_be_shown(src, monkeypatch, platform, env, screenshot):
    """Where there is a display (or a platform without X11/Wayland, a Qt platform chosen, or a
    screenshot rendered offscreen), the window starts with what the command line gave it; only
    Linux/BSD without any of them is refused (one line, not Qt's abort)."""
    started = []

    def run(path, **kwargs):
        started.append((path, kwargs))
        return 0

    monkeypatch.setattr("inspector.gui.app.run", run)
    monkeypatch.setattr(sys, "platform", platform)
    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    argv = [str(src), "--target", "bf16", "--lang", "zh_CN", "--reference", "r.safetensors"]
    assert main([*argv, *(["--screenshot", screenshot] if screenshot else [])]) == 0
    assert started == [
        (
            str(src),
            {
                "target": "BF16",
                "screenshot": screenshot,
                "reference": "r.safetensors",
                "lang": "zh_CN",
            },
        )
    ]


def test_the_window_without_options_is_given_no_choices(src, monkeypatch):
    """No --target, --lang, --reference: the window decides (config.json, the last choice, the
    system locale)."""
    started = []

    def run(path, **kwargs):
        started.append((path, kwargs))
        return 0

    monkeypatch.setattr("inspector.gui.app.run", run)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert main([str(src)]) == 0
    assert started == [
        (str(src), {"target": None, "screenshot": None, "reference": None, "lang": None})
    ]


# -- signal handlers ------------------------------------------------------------------------------


def test_a_system_that_refuses_signal_handlers_still_runs_a_command_and_a_ctrl_c_ends_it(
    src, capsys, monkeypatch
):
    """sigaction refused (a sandbox that filters it): signal.signal raises OSError. The command
    runs without its SIGTERM handler, and a Ctrl-C still ends it with 130 and one line."""

    def refused(signum, handler):
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    monkeypatch.setattr(signal, "signal", refused)
    assert main(["list", str(src)]) == 0
    assert capsys.readouterr() == ("\n".join(LISTING) + "\n", "")

    def pressed(args):
        raise KeyboardInterrupt

    monkeypatch.setitem(dispatch.COMMANDS, "list", pressed)
    assert main(["list", str(src)]) == 130
    assert capsys.readouterr() == (
        "",
        "checkpoint-inspector: error: interrupted; nothing was written\n",
    )
    assert {s: signal.getsignal(s) for s in before} == before


# -- the stop exceptions --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "args"),
    [
        (Terminated, (signal.SIGTERM,)),
        (StoppedAfterWriting, (signal.SIGTERM, "out.safetensors")),
        (StoppedAfterWriting, (signal.SIGINT, "out")),
    ],
    ids=["Terminated", "StoppedAfterWriting-SIGTERM", "StoppedAfterWriting-SIGINT"],
)
def test_a_stop_exception_has_its_arguments_as_args_and_survives_a_copy(cls, args):
    """As every exception's, ``args`` are the arguments it was given (tracebacks and logs show
    them), and a copy or a pickle (a worker's result, a test runner's report) is made from them:
    the copy says the same signal and path."""
    e = cls(*args)
    copy = pickle.loads(pickle.dumps(e))
    assert type(copy) is cls
    assert e.args == copy.args == args
    assert (copy.signum, getattr(copy, "path", None)) == (args[0], (*args, None)[1])
