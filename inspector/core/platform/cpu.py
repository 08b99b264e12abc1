"""How many cores this process may use: its affinity mask where the system has one (Linux), else
every core (macOS and Windows have no ``sched_getaffinity``)."""

from __future__ import annotations

import os

from .facilities import allowed


def usable_cores() -> int:
    if allowed("affinity") and hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
