"""What each scheme would cost, before anything is written: the output's size and every
weight's error, from one read of the weights for all the schemes asked.

The figures are those ``quantize`` reports and ``diff OUT SRC`` measures on the written model
(the same kernels, the same sums), so a preview is a promise the save keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

import numpy as np

from ..cast.pool import start_processes
from ..cast.worker_boot import kill_workers, stop_workers
from ..cast.worker_policy import processes_for
from ..checkpoint import Checkpoint
from ..errors import CheckpointError
from ..layout import TensorInfo
from ..progress import Job, Progress, mapped
from ..quant.compare import ErrorFigures
from ..thread_start import signals_held
from .checks import plans_for, refuse_unquantizable
from .job import absmax_of, first_pass_bytes
from .preview_measure import measure_weight
from .preview_worker import WeightTask, identities_of, measure_in_worker, source_of
from .report import QuantizedWeightReport, QuantizeReport, skipped_weights
from .schemes import Scheme
from .stream import WeightAbsmax, parts_of
from .targets import DEFAULT_IGNORE, QuantizePlan

# a block of rows per read: its six schemes' passes stay in the CPU's cache (measured: 2 MiB
# blocks cost a quarter more)
PREVIEW_CHUNK_BYTES = 512 << 10


def preview_checkpoint(
    ckpt: Checkpoint,
    schemes: Sequence[Scheme],
    ignore: Sequence[str] = DEFAULT_IGNORE,
    chunk_bytes: int = PREVIEW_CHUNK_BYTES,
    processes: int | None = None,
) -> Job[list[QuantizeReport]]:
    """One report per scheme (in the order given), nothing written. ``processes``: worker
    processes to measure in (None: as many as a cast of that much would get, else threads)."""
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
    weights = []
    for t in todo:
        which = [i for i, w in enumerate(wanted) if t.name in w]
        gscales = [_global_scale(gmax.get(plans[i].scheme.name), plans[i], t) for i in which]
        weights.append(_Weight(t, which, [plans[i].scheme for i in which], gscales))
    n = processes_for(sum(t.nbytes for t in todo)) if processes is None else processes
    if n > 0:
        run = _in_processes(ckpt, weights, chunk_bytes, n)
    else:
        run = _on_threads(ckpt, weights, chunk_bytes)
    measured = yield from mapped(run, lambda p: Progress(done + p.done, total, p.name))
    for w, figures in measured:
        for i, f in zip(w.which, figures, strict=True):
            t = w.tensor
            nbytes = sum(e.nbytes for e in parts_of(t, plans[i].scheme))
            shape = tuple(int(d) for d in t.shape)
            reports[i].weights.append(
                QuantizedWeightReport(t.name, shape, t.dtype.name, t.nbytes, nbytes, f)
            )
            reports[i].bytes_out += nbytes - t.nbytes
    return reports


@dataclass
class _Weight:
    """A weight to measure: the plans that want it (by index), their schemes and NVFP4's
    global scale where a scheme has one."""

    tensor: TensorInfo
    which: list[int]
    schemes: list[Scheme]
    gscales: list[np.float32 | None]


Measured = list[tuple[_Weight, list[ErrorFigures]]]


def _on_threads(ckpt: Checkpoint, weights: list[_Weight], chunk_bytes: int) -> Job[Measured]:
    out: Measured = []
    done = 0
    with ThreadPoolExecutor(2) as pool:  # the schemes of a block share the cores
        for w in weights:
            job = measure_weight(ckpt, w.tensor, w.schemes, w.gscales, chunk_bytes, pool)
            figures = yield from mapped(  # rows measured, as bytes of the weight
                job,
                lambda p, d=done, n=w.tensor.nbytes: Progress(
                    d + n * p.done // max(1, p.total), 0, p.name
                ),
            )
            out.append((w, figures))
            done += w.tensor.nbytes
    return out


def _in_processes(
    ckpt: Checkpoint, weights: list[_Weight], chunk_bytes: int, n: int
) -> Job[Measured]:
    """Whole weights measured in ``n`` worker processes, the largest first (the last to finish
    is then a small one: no core waits long for it), results in the weights' order; progress
    every 0.1 s at least (a cancel is seen within that)."""
    (source, keep_all), identities = source_of(ckpt), identities_of(ckpt)
    pool = start_processes(n)
    measured = False
    try:
        largest_first = sorted(range(len(weights)), key=lambda k: -weights[k].tensor.nbytes)
        with signals_held():  # submit may start the pool's thread
            running = {
                pool.submit(measure_in_worker, WeightTask(
                    source, keep_all, identities, weights[k].tensor.name, tuple(weights[k].schemes),
                    tuple(None if g is None else float(g) for g in weights[k].gscales),
                    chunk_bytes)): k
                for k in largest_first
            }  # fmt: skip
        figures: dict[int, list[ErrorFigures]] = {}
        done, last = 0, ""
        while running:
            finished, _ = wait(running, timeout=0.1, return_when=FIRST_COMPLETED)
            for future in finished:
                k = running.pop(future)
                try:
                    figures[k] = future.result()
                except BrokenProcessPool:
                    raise CheckpointError(
                        None, "a preview worker process stopped unexpectedly (out of memory?)"
                    ) from None
                done, last = done + weights[k].tensor.nbytes, weights[k].tensor.name
            yield Progress(done, 0, last)
        measured = True
        return [(w, figures[k]) for k, w in enumerate(weights)]
    finally:
        # a preview writes nothing: a cancel, Ctrl-C or error drops the weights in hand at once
        (stop_workers if measured else kill_workers)(pool)


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
