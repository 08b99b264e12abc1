"""How many cast worker processes a cast gets: decided without numpy, so the program can ask
before it loads the cast modules and start the workers early (:mod:`.worker_boot`).

Worker processes are started with ``spawn``: each imports its parent's main script, so only
programs whose main module is safe to import allow them (:func:`allow_worker_processes`).
"""

from __future__ import annotations

import os

from ..errors import CheckpointError
from ..platform import cpu, file_io
from ..save.output_names import PICKLE_SUFFIXES

# Worker processes take ~0.2 s to start; below this much narrowing work, threads finish first.
PROCESS_MIN_BYTES = 256 << 20
MAX_PROCESSES = 4  # each holds ~45 MiB: an interpreter, numpy, one chunk
PROCESSES_ENV = "CHECKPOINT_INSPECTOR_CAST_PROCESSES"  # a count forces it; 0 turns them off
_CHECKPOINT_SUFFIXES = (".safetensors", *PICKLE_SUFFIXES)
_workers_allowed = False  # see allow_worker_processes


def allow_worker_processes(allowed: bool = True) -> None:
    """Let :func:`processes_for` start workers on its own in this process.

    A ``spawn``ed worker imports its parent's main script: a script without the
    ``if __name__ == "__main__"`` guard would run its top level again in every worker. So only
    programs whose main module is safe to import call this (``python -m inspector``, the
    installed commands, the bundles); a library caller gets threads unless it passes
    ``processes=`` itself or the user sets :data:`PROCESSES_ENV`.
    """
    global _workers_allowed
    _workers_allowed = allowed


def processes_supported() -> bool:
    """Workers write with ``pwrite`` into a file the caller holds open: POSIX only (Windows
    could not rename a temp another process has open, and has no ``pwrite``)."""
    return file_io.can_pwrite()


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system has one)."""
    return cpu.usable_cores()


def processes_for(work_bytes: int) -> int:
    """Worker processes for ``work_bytes`` of narrowing casts: one per core (at most
    :data:`MAX_PROCESSES`) from :data:`PROCESS_MIN_BYTES` on, in a program that allowed them;
    none on one core or without ``pwrite``. :data:`PROCESSES_ENV` overrides the count."""
    if not processes_supported():
        return 0
    forced = os.environ.get(PROCESSES_ENV, "").strip()
    if forced:
        if not forced.isdigit():
            raise CheckpointError(None, f"{PROCESSES_ENV} must be a whole number, not {forced!r}")
        return min(int(forced), 64)
    if not _workers_allowed:
        return 0
    cores = usable_cores()
    return min(cores, MAX_PROCESSES) if work_bytes >= PROCESS_MIN_BYTES and cores > 1 else 0


def bytes_on_disk(path: str) -> int:
    """What a cast of ``path`` (a file, a shard index, a model folder) reads at most, from the
    sizes of its checkpoint files alone: an estimate for starting workers early, 0 if unknown."""
    try:
        folder = path if os.path.isdir(path) else None
        if folder is None and path.endswith(".json"):
            folder = os.path.dirname(path) or "."
        if folder is None:
            return os.path.getsize(path)
        with os.scandir(folder) as entries:
            return sum(
                e.stat().st_size
                for e in entries
                if e.name.endswith(_CHECKPOINT_SUFFIXES) and e.is_file()
            )
    except (OSError, ValueError):
        return 0
