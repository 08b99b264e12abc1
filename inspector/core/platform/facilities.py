"""Which platform facilities this process may use, asked at every call.

A facility is used only where the system has it and ``CHECKPOINT_INSPECTOR_WITHOUT`` (a comma
list of the names below, or ``all``) does not turn it off. The switch exists so that every fallback runs
on Linux too, the way it runs on macOS or Windows: the tests' ``--without`` option sets it, and
worker processes and CLI children inherit it. It is also a way out for a file system that
misbehaves with one of them (``CHECKPOINT_INSPECTOR_WITHOUT=flock`` on a broken network mount).
"""

from __future__ import annotations

import functools
import os

from ..errors import CheckpointError

WITHOUT_ENV = "CHECKPOINT_INSPECTOR_WITHOUT"

# name -> what it is for (docs/reliability.md, "Platform facilities", says what replaces it)
FACILITIES: dict[str, str] = {
    "pwrite": "os.pwrite: cast worker processes write their ranges in place",
    "populate": "mmap.MAP_POPULATE: a worker's mapped range is read in by the map call",
    "madvise": "mmap.madvise: mapped pages of a read tensor are dropped from this process",
    "writeback": "sync_file_range/posix_fadvise: written data goes to the disk early",
    "affinity": "os.sched_getaffinity: the cores this process may run on",
    "flock": "fcntl.flock: a live save's temps and journals are told from leftovers",
    "link": "os.link: a file a commit replaces is kept by a hard link until the commit ends",
    "sighup": "signal.SIGHUP: a closed terminal unwinds a save like Ctrl-C",
    "dir_fsync": "fsync of a folder: a rename survives a power cut",
    "full_fsync": "fcntl.F_FULLFSYNC (macOS): fsync that reaches the disk's platters",
    "fchmod": "os.fchmod (POSIX; Windows before Python 3.13 has none): an output's permission bits",
    "unlink_open": "deleting a file this program holds open (POSIX; Windows refuses)",
    "replace_mapped": "a rename over a file this program has mapped (POSIX; Windows refuses)",
    "mallopt": "glibc mallopt: a preview worker keeps the memory it frees for its next block",
}


@functools.lru_cache(maxsize=8)
def _parse(value: str) -> frozenset[str]:
    names = frozenset(n.strip().lower() for n in value.split(",") if n.strip())
    return frozenset(FACILITIES) if "all" in names else names


def switched_off() -> frozenset[str]:
    """The facilities ``CHECKPOINT_INSPECTOR_WITHOUT`` turns off now (unknown names included:
    they switch nothing off, and :func:`check_switches` refuses them up front)."""
    return _parse(os.environ.get(WITHOUT_ENV, ""))


def check_switches() -> None:
    """Refuse a name ``CHECKPOINT_INSPECTOR_WITHOUT`` gives that is not a facility (a typo would
    otherwise switch nothing off, silently). Called once, where a command starts."""
    unknown = sorted(switched_off() - FACILITIES.keys())
    if unknown:
        raise CheckpointError(
            None,
            f"{WITHOUT_ENV} names {', '.join(unknown)}, which is not a facility "
            f"(known: {', '.join(FACILITIES)}, or all)",
        )


def allowed(name: str) -> bool:
    """May ``name`` be used, if the system has it? (Read at each call, never cached per import.)"""
    return name not in switched_off()
