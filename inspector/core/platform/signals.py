"""The signals that end a command the way Ctrl-C does, as far as this system has them: SIGTERM
everywhere (on Windows only ``os.kill`` and the C runtime raise it), SIGHUP on POSIX."""

from __future__ import annotations

import signal

from .facilities import allowed


def termination_signals() -> tuple[signal.Signals, ...]:
    """SIGTERM, and SIGHUP where there is one."""
    sigs = [signal.SIGTERM]
    if allowed("sighup") and hasattr(signal, "SIGHUP"):
        sigs.append(signal.SIGHUP)
    return tuple(sigs)


def interrupting_signals() -> tuple[signal.Signals, ...]:
    """Ctrl-C and the termination signals: those whose Python handlers may raise."""
    return (signal.SIGINT, *termination_signals())
