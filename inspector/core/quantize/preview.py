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
from ..quant.compare import ErrorFigures
from .checks import plans_for, refuse_unquantizable
from .job import DEFAULT_CHUNK_BYTES, absmax_of, first_pass_bytes
from .report import QuantizedWeightReport, QuantizeReport, skipped_weights
from .rtn import quantize_rows
from .schemes import Scheme
from .stream import WeightAbsmax, parts_of, row_blocks, rows_per_block
from .targets import DEFAULT_IGNORE, QuantizePlan


def preview_checkpoint(
    ckpt: Checkpoint,
    schemes: Sequence[Scheme],
    ignore: Sequence[str] = DEFAULT_IGNORE,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
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
            which = [i for i, w in enumerate(wanted) if t.name in w]
            figures = {i: ErrorFigures() for i in which}
            gscales = {i: _global_scale(gmax.get(plans[i].scheme.name), plans[i], t) for i in which}
            rows = int(t.shape[0])
            running: list[Future[None]] = []
            for block, _r0, r1 in row_blocks(ckpt, t, rows_per_block(t, chunk_bytes, unit)):
                block = block.copy()  # the reader reuses its buffer; read ahead meanwhile
                for f in running:  # a scheme's blocks are measured in order
                    f.result()
                running = [
                    pool.submit(_measure, block, t, plans[i].scheme, gscales[i], figures[i])
                    for i in which
                ]
                yield Progress(done + t.nbytes * r1 // max(1, rows), total, t.name)
            for f in running:
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


def _measure(
    block: np.ndarray,
    t: TensorInfo,
    scheme: Scheme,
    gscale: np.float32 | None,
    figures: ErrorFigures,
) -> None:
    q = quantize_rows(block, t.dtype, scheme, gscale)
    assert q.source is not None
    figures.add(q.values, q.source)


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
