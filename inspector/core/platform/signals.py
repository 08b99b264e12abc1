"""The signals that end a command the way Ctrl-C does, as far as this system has them: SIGTERM
everywhere (on Windows only ``os.kill`` and the C runtime raise it), SIGHUP on POSIX."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

from .facilities import allowed


def termination_signals() -> tuple[signal.Signals, ...]:
    """SIGTERM, and SIGHUP where there is one."""
    sigs = [signal.SIGTERM]
    if allowed("sighup") and hasattr(signal, "SIGHUP"):
        sigs.append(signal.SIGHUP)
    return tuple(sigs)


@contextmanager
def sigint_blocked() -> Iterator[None]:
    """SIGINT held pending in this thread (and what it starts) until the block ends (POSIX;
    elsewhere nothing: Windows starts processes without our Ctrl-C handling anyway)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def unblock_sigint() -> None:
    """Undo an inherited :func:`sigint_blocked` (a process started inside one)."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def interrupting_signals() -> tuple[signal.Signals, ...]:
    """Ctrl-C and the termination signals: those whose Python handlers may raise."""
    return (signal.SIGINT, *termination_signals())
