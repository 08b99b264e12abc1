"""What each scheme would cost, before anything is written: the output's size and every
weight's error, from one read of the weights for all the schemes asked.

The figures are those ``quantize`` reports and ``diff OUT SRC`` measures on the written model
(the same kernels, the same sums), so a preview is a promise the save keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from ..checkpoint import Checkpoint
from ..layout import TensorInfo
from ..progress import Job, Progress
from ..quant.compare import ErrorFigures, SharedReference
from .checks import plans_for, refuse_unquantizable
from .job import absmax_of, first_pass_bytes
from .report import QuantizedWeightReport, QuantizeReport, skipped_weights
from .rtn import quantize_widened
from .schemes import Kind, Scheme, Strategy
from .stream import WeightAbsmax, parts_of, row_blocks, rows_per_block
from .targets import DEFAULT_IGNORE, QuantizePlan
from .widened import WidenedRows

# a block of rows per read: its six schemes' passes stay in the CPU's cache (measured: 2 MiB
# blocks cost a quarter more)
PREVIEW_CHUNK_BYTES = 512 << 10


def preview_checkpoint(
    ckpt: Checkpoint,
    schemes: Sequence[Scheme],
    ignore: Sequence[str] = DEFAULT_IGNORE,
    chunk_bytes: int = PREVIEW_CHUNK_BYTES,
) -> Job[list[QuantizeReport]]:
    """One report per scheme (in the order given), nothing written."""
    plans = plans_for(ckpt, schemes, ignore)
    usable = [p for p in plans if p.targets]
    if not usable:
        refuse_unquantizable(ckpt, plans[0])  # says why in one line
    refuse_unquantizable(ckpt, usable[0])  # an already quantized source
    wanted = [{t.name for t in p.targets} for p in plans]
    todo = [t for t in ckpt.tensors if any(t.name in w for w in wanted)]
    first = sum(first_pass_bytes(p) for p in plans)
    total = first + sum(t.nbytes for t in todo)
    done = 0
    yield Progress(0, total)
    gmax: dict[str, WeightAbsmax] = {}
    for p in plans:
        if p.fused and p.targets:
            gmax[p.scheme.name] = yield from absmax_of(ckpt, p, chunk_bytes, done, total)
            done += first_pass_bytes(p)
    reports = [_start_report(ckpt, p) for p in plans]
    unit = max((s.block[0] for s in schemes if s.block), default=1)
    with ThreadPoolExecutor(2) as pool:  # the schemes of a block share the cores
        for t in todo:
            which = sorted(
                (i for i, w in enumerate(wanted) if t.name in w),
                key=lambda i: -_COST.get((plans[i].scheme.kind, plans[i].scheme.strategy), 8),
            )
            figures = {i: ErrorFigures() for i in which}
            gscales = {i: _global_scale(gmax.get(plans[i].scheme.name), plans[i], t) for i in which}
            groupings = [_groups_of(plans[i].scheme, t) for i in which]
            rows = int(t.shape[0])
            running: dict[int, Future[None]] = {}
            for block, r0, r1 in row_blocks(ckpt, t, rows_per_block(t, chunk_bytes, unit)):
                widened = WidenedRows(block, t.dtype)
                if np.shares_memory(widened.x, block):  # the reader reuses its buffer
                    widened = WidenedRows(block.copy(), t.dtype)
                # while the pool measures the last block: what every scheme shares
                widened.prepare(g for g in groupings if g)
                shared = SharedReference.of(widened.x, r0 * int(t.shape[1]))
                for i in which:  # each scheme's blocks are measured in order
                    if i in running:
                        running[i].result()
                    running[i] = pool.submit(
                        _measure, widened, plans[i].scheme, gscales[i], figures[i], shared
                    )
                yield Progress(done + t.nbytes * r1 // max(1, rows), total, t.name)
            for f in running.values():
                f.result()
            done += t.nbytes
            for i in which:
                nbytes = sum(e.nbytes for e in parts_of(t, plans[i].scheme))
                shape = tuple(int(d) for d in t.shape)
                reports[i].weights.append(
                    QuantizedWeightReport(t.name, shape, t.dtype.name, t.nbytes, nbytes, figures[i])
                )
                reports[i].bytes_out += nbytes - t.nbytes
    return reports


# a scheme's relative cost per value, measured (bench/): the dearest go first
_COST = {
    (Kind.FP8, Strategy.CHANNEL): 7,
    (Kind.FP8, Strategy.BLOCK): 11,
    (Kind.INT, Strategy.CHANNEL): 6,
    (Kind.INT, Strategy.GROUP): 6,
    (Kind.FP4, Strategy.TENSOR_GROUP): 9,
    (Kind.FP4, Strategy.GROUP): 8,
}


def _groups_of(scheme: Scheme, t: TensorInfo) -> int:
    """Groups per row whose maxima the scheme's scales start from (0: none shared)."""
    cols = int(t.shape[1])
    if scheme.kind is Kind.FP8:
        bw = scheme.block[1] if scheme.block else cols
        return cols // bw if cols % bw == 0 else 0
    if scheme.kind is Kind.INT:
        return cols // (scheme.group_size or cols)
    return cols // (scheme.group_size or (16 if scheme.strategy is Strategy.TENSOR_GROUP else 32))


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


def _start_report(ckpt: Checkpoint, plan: QuantizePlan) -> QuantizeReport:
    r = QuantizeReport(plan.scheme.name, bytes_in=ckpt.total_nbytes, bytes_out=ckpt.total_nbytes)
    r.skipped = skipped_weights(plan)
    if not plan.targets:
        r.notes.append(f"no weight can take {plan.scheme.name}")
    return r


def _global_scale(
    absmax: WeightAbsmax | None, plan: QuantizePlan, t: TensorInfo
) -> np.float32 | None:
    return absmax.scale_of(plan, t) if absmax is not None else None
