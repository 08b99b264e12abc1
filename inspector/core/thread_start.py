"""Starting and joining threads where a signal handler may raise (Ctrl-C; the CLI's SIGTERM
and SIGHUP).

A Python signal handler that raises while ``Thread.start()`` runs breaks CPython's thread
bookkeeping: ``start()`` cleans up after the exception, then the new thread does the same and
prints a ``KeyError`` traceback (3.11). One that raises while ``Thread.join()`` waits marks the
thread stopped though it still runs (3.11), so nothing waits for it again: a process pool's
shutdown interrupted so left its workers running and the program hanging at exit. Clean-up has
the same need: a handler raising inside a lock's ``with`` can leave the lock taken. So while a
thread starts or is joined, and while a stopped cast cleans up, those handlers are swapped for
one that only records the signal, and a recorded signal is raised again right after.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from .platform.signals import interrupting_signals


@contextmanager
def signals_held() -> Iterator[None]:
    """Defer the Python-level handlers of SIGINT/SIGTERM/SIGHUP until the block ends."""
    if threading.current_thread() is not threading.main_thread():
        yield  # handlers only ever run in the main thread
        return
    caught: list[int] = []
    saved = {}
    for sig in interrupting_signals():
        handler = signal.getsignal(sig)
        if callable(handler):  # a Python handler; SIG_DFL / SIG_IGN act in C, never mid-start
            saved[sig] = handler
            signal.signal(sig, lambda signum, _frame: caught.append(signum))
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        for sig in caught:
            signal.raise_signal(sig)  # the restored handler runs now, outside the start
