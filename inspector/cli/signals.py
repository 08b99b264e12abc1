"""SIGTERM and SIGHUP end a command the way Ctrl-C does: by an exception that unwinds every
``with`` and ``finally``, so a cast being written removes its temp files on the way out."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ..core.platform.signals import interrupting_signals, termination_signals


class Terminated(Exception):
    """SIGTERM/SIGHUP: unwind like Ctrl-C so every temp file is removed on the way out."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class StoppedAfterWriting(Exception):
    """A signal stopped a command after its output was renamed into place (the last few
    milliseconds): the output is complete, and the message must say so."""

    def __init__(self, signum: int, path: str) -> None:
        super().__init__(signum, path)
        self.signum, self.path = signum, path


def _raise_terminated(signum: int, _frame: object) -> None:
    raise Terminated(signum)


def install_signal_handlers() -> None:
    import signal

    for sig in termination_signals():  # SIGHUP where the system has one
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            signal.signal(sig, _raise_terminated)


def ignore_further_signals() -> None:
    """The command is ending (on a signal, or done): more Ctrl-C (a user pressing it again and
    again) must not interrupt the exit, where Python could only print "lost sys.stderr" or die
    of the signal after the work was finished."""
    import signal

    for sig in interrupting_signals():
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            signal.signal(sig, signal.SIG_IGN)


@contextlib.contextmanager
def handlers_given_back() -> Iterator[None]:
    """A library call of ``main()`` (a script, a notebook, a test): the handlers the command
    installs or ignores are the program's own again when it returns."""
    import signal

    saved = [(sig, signal.getsignal(sig)) for sig in interrupting_signals()]
    try:
        yield
    finally:
        for sig, handler in saved:
            # not the main thread, or a handler not set from Python (getsignal gave None)
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(sig, handler)
