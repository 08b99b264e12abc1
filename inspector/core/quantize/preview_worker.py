"""A preview's weight measured in a worker process: the checkpoint opened there once (its
files must be those the caller opened), the weight measured for its schemes one after another.

Processes, not threads: six schemes' numpy calls on threads spent a quarter more CPU on the
interpreter lock than the work itself took on two cores (docs/benchmarks.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checkpoint import Checkpoint
from ..errors import CheckpointError
from ..opening import open_checkpoint
from ..platform.memory import keep_freed_memory
from ..progress import run_job
from ..quant.compare import ErrorFigures
from .preview_measure import measure_weight
from .schemes import Scheme

Identities = tuple[tuple[str, tuple[int, int, int, int] | None], ...]


@dataclass(frozen=True)
class WeightTask:
    """Measure ``weight`` of the checkpoint at ``source`` (whose files must still be
    ``identities``) for ``schemes``; ``gscales``: NVFP4's global scales (else None)."""

    source: str
    keep_all: bool  # opened as the caller opened it (a training checkpoint's every tensor)
    identities: Identities
    weight: str
    schemes: tuple[Scheme, ...]
    gscales: tuple[float | None, ...]
    chunk_bytes: int


def identities_of(ckpt: Checkpoint) -> Identities:
    """Each file of ``ckpt`` with the identity it had when opened (device, inode, size, mtime)."""
    return tuple((h.path, h.identity) for h in ckpt.files)


def source_of(ckpt: Checkpoint) -> tuple[str, bool]:
    """What was opened (the folder, the index or the file), and whether with ``keep_all``: a
    training checkpoint read as its model has ``training`` set; opened whole, or a plain
    checkpoint, it has not, and ``keep_all`` then opens it the same way."""
    return ckpt.folder or ckpt.index_path or ckpt.path, ckpt.training is None


_opened: tuple[tuple[str, bool, Identities], Checkpoint] | None = None
_allocator_set = False


def measure_in_worker(task: WeightTask) -> list[ErrorFigures]:
    """The figures of ``task``'s weight, one per scheme, every block closed."""
    global _allocator_set
    if not _allocator_set:
        _allocator_set = True
        keep_freed_memory()  # a few MiB freed and taken again per block: no page faults
    ckpt = _checkpoint(task.source, task.keep_all, task.identities)
    if task.weight not in ckpt:  # a folder whose files changed in a way no identity shows
        raise CheckpointError(task.source, "changed on disk since it was opened; reopen it")
    gscales = [None if g is None else np.float32(g) for g in task.gscales]
    figures = run_job(measure_weight(ckpt, ckpt[task.weight], task.schemes, gscales,
                                     task.chunk_bytes))  # fmt: skip
    for f in figures:
        f.close()  # no carried block is sent back
    return figures


def _checkpoint(source: str, keep_all: bool, identities: Identities) -> Checkpoint:
    global _opened
    key = (source, keep_all, identities)
    if _opened is not None and _opened[0] == key:
        return _opened[1]
    if _opened is not None:
        _opened[1].close()
        _opened = None
    ckpt = open_checkpoint(source, keep_all=keep_all)
    if identities_of(ckpt) != identities:
        ckpt.close()
        raise CheckpointError(source, "file changed on disk since it was opened; reopen it")
    _opened = key, ckpt
    return ckpt
