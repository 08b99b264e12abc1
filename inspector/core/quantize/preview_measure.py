"""One weight measured for every scheme asked: a block of rows read and widened once, its
shared work (group maxima, the source's side of the figures) done once, then each scheme's
values and figures. The preview runs it on threads in-process, or whole weights at a time in
worker processes (:mod:`.preview_worker`), where no lock is shared between the schemes.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor, Future

import numpy as np

from ..checkpoint import Checkpoint
from ..layout import TensorInfo
from ..progress import Job, Progress
from ..quant.compare import ErrorFigures, SharedReference
from .rtn import quantize_widened
from .schemes import Kind, Scheme, Strategy
from .stream import row_blocks, rows_per_block
from .widened import WidenedRows

# a scheme's relative cost per value, measured (bench/): the dearest start first
_COST = {
    (Kind.FP8, Strategy.CHANNEL): 7,
    (Kind.FP8, Strategy.BLOCK): 11,
    (Kind.INT, Strategy.GROUP): 6,
    (Kind.FP4, Strategy.TENSOR_GROUP): 9,
    (Kind.FP4, Strategy.GROUP): 8,
}


def measure_weight(
    ckpt: Checkpoint,
    t: TensorInfo,
    schemes: Sequence[Scheme],
    gscales: Sequence[np.float32 | None],
    chunk_bytes: int,
    pool: Executor | None = None,
) -> Job[list[ErrorFigures]]:
    """Each scheme's figures for ``t`` (``gscales``: NVFP4's global scale, else None); progress
    in rows. ``pool`` measures the schemes of a block side by side (each scheme's blocks in
    order), else they run here, one after another."""
    figures = [ErrorFigures() for _ in schemes]
    order = sorted(range(len(schemes)), key=lambda i: -_COST.get(_key(schemes[i]), 8))
    groupings = [g for g in (_groups_of(s, t) for s in schemes) if g]
    unit = max((s.rows_unit for s in schemes), default=1)
    rows = int(t.shape[0])
    running: dict[int, Future[None]] = {}
    yield Progress(0, rows, t.name)
    for block, r0, r1 in row_blocks(ckpt, t, rows_per_block(t, chunk_bytes, unit)):
        widened = WidenedRows(block, t.dtype)
        if np.shares_memory(widened.x, block):  # the reader reuses its buffer
            widened = WidenedRows(block.copy(), t.dtype)
        # while the pool measures the last block: what every scheme shares
        widened.prepare(groupings)
        shared = SharedReference.of(widened.x, r0 * int(t.shape[1]))
        for i in order:
            args = (widened, schemes[i], gscales[i], figures[i], shared)
            if pool is None:
                _measure(*args)
                continue
            if i in running:  # a scheme's blocks are measured in order
                running[i].result()
            running[i] = pool.submit(_measure, *args)
        yield Progress(r1, rows, t.name)
    for f in running.values():
        f.result()
    return figures


def _key(scheme: Scheme) -> tuple[Kind, Strategy]:
    return scheme.kind, scheme.strategy


def _groups_of(scheme: Scheme, t: TensorInfo) -> int:
    """Groups per row whose maxima the scheme's scales start from (0: none shared)."""
    cols = int(t.shape[1])
    width = scheme.group_width(cols)
    return cols // width if cols % width == 0 else 0


def _measure(
    rows: WidenedRows,
    scheme: Scheme,
    gscale: np.float32 | None,
    figures: ErrorFigures,
    shared: SharedReference,
) -> None:
    q = quantize_widened(rows, scheme, gscale, measure=True, pack=False)
    assert q.values is not None and q.source is not None
    figures.add(q.values, q.source, shared)
