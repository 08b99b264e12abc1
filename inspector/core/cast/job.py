"""The cast job: stream a checkpoint into a copy with its float tensors cast, durably.

A generator per :mod:`inspector.core.progress`: it yields ``Progress`` (source bytes done / total)
between bounded chunks and returns a :class:`CastReport`. Closing it mid-way (cancel) or any error
leaves no output and no temp file; the destination keeps what it had.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence

import numpy as np

from ..checkpoint import Checkpoint
from ..dtypes import DType
from ..errors import CheckpointError
from ..formats.torch_pickle import pickle_facts
from ..layout import Header, TensorInfo
from ..model_folder.companions import copy_companions, read_by_a_save
from ..model_folder.config import model_folder
from ..progress import Job, Progress
from ..quant.rows import raw_chunks
from ..save.writeback import BackgroundWriter
from ..save.writer import AtomicWriter
from ..training_layout import training_left_out
from .dequantize import dequantize_and_cast, dequantizing
from .kernels import can_cast
from .outputs import (
    file_outputs,
    hf_renames,
    index_output,
    index_text,
    is_one_burnpack,
    output_layout,
    output_paths,
)
from .pool import ChunkCaster
from .precision import ErrorAccumulator
from .report import CastReport, TensorCastReport, report_entry
from .stream import OutputBatch, SourceReader, cast_processes

DEFAULT_CHUNK_BYTES = 8 << 20

__all__ = ["CastReport", "TensorCastReport", "cast_checkpoint", "plan_cast"]


def _left_out(ckpt: Checkpoint) -> list[dict[str, str]]:
    return [
        {"name": v.name, "why": v.text}
        for h in ckpt.files
        if (facts := pickle_facts(h)) is not None
        for v in facts.values
        if v.left_out
    ]


def plan_cast(
    ckpt: Checkpoint, target: DType, keep: Sequence[str] = ()
) -> list[tuple[TensorInfo, DType]]:
    """Output dtype of every tensor, in checkpoint order.

    Floats go to ``target`` unless a ``keep`` glob matches the name (``fnmatch``, case-sensitive);
    integer, bool and complex tensors stay as they are, and so do float formats outside the
    torch-verified engine (F4, F6, F8_E8M0, *FNUZ): block-scaled data is not cast element-wise.
    """
    plan = []
    for t in ckpt.tensors:
        dst = t.dtype
        if (
            t.dtype.is_float
            and can_cast(t.dtype, target)
            and not any(fnmatch.fnmatchcase(t.name, g) for g in keep)
        ):
            dst = target
        plan.append((t, dst))
    return plan


def cast_checkpoint(
    ckpt: Checkpoint,
    target: DType,
    out: str,
    keep: Sequence[str] = (),
    report: bool = True,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    report_path: str | None = None,
    processes: int | None = None,
) -> Job[CastReport]:
    """Write ``ckpt`` with float tensors cast to ``target`` to ``out`` (a file, or a folder if sharded).

    Yields ``Progress`` between chunks; returns the :class:`CastReport`. Precision is measured on
    the same chunks as they are cast (``report=False`` skips that arithmetic). Header order, data
    order and ``__metadata__`` follow the source. Every output path (``report_path`` too) is
    checked before the first byte is read; nothing appears until every byte is on disk, and the
    shards, the index and the report are committed together. ``processes``: worker processes
    for the narrowing casts (None: :func:`cast_processes` decides); the bytes written and the
    report are the same either way.
    """
    out = os.fspath(out)
    if not out:
        raise CheckpointError(None, "the output path is empty")
    deq = dequantizing(ckpt)  # a quantized checkpoint is dequantized, or refused here
    plan = plan_cast(ckpt, target, keep)
    dst_of = {t.name: d for t, d in plan}
    total = ckpt.total_nbytes
    done = 0
    result = CastReport(target.name, left_out=_left_out(ckpt), training=training_left_out(ckpt))
    single = is_one_burnpack(out)
    copies = (ckpt.is_sharded or ckpt.folder is not None) and not single  # a model folder out
    protect = read_by_a_save(ckpt.path, [h.path for h in ckpt.files], ckpt.index_path, copies)
    with AtomicWriter(protect, root=out if ckpt.is_sharded and not single else None) as writer:
        paths = output_paths(ckpt, out, writer)
        renames, head_rows = hf_renames(ckpt)  # GGUF: back to the HF names and row order
        outputs_of = {
            h.path: file_outputs(h.tensors, dst_of, target, deq, renames) for h in ckpt.files
        }
        if deq is not None and ckpt.is_sharded:  # a shard of scales only: nothing left to write
            paths = {p: d for p, d in paths.items() if outputs_of[p]}
        groups: dict[str, list[Header]] = {}  # output file -> its sources, in checkpoint order
        for h in ckpt.files:
            if h.path in paths:
                groups.setdefault(paths[h.path], []).append(h)
        for dest in groups:
            writer.reserve(dest)
        layouts = {  # a tensor the output format cannot hold is refused before any work
            dest: output_layout(dest, [e for h in hs for _t, e, _w in outputs_of[h.path]], hs)
            for dest, hs in groups.items()
        }
        index_out = None
        if ckpt.is_sharded and not single:
            index_out = index_output(ckpt, out)
            writer.reserve(index_out)
        if report_path is not None:
            report_path = os.fspath(report_path)
            writer.reserve(report_path, what="report")
            report = True
        if copies:
            any_cast = deq is not None or any(d != t.dtype for t, d in plan)
            copy_companions(
                writer, model_folder(ckpt.path), out, target if any_cast else None, deq is not None
            )
        bg = BackgroundWriter()
        casts = ChunkCaster(processes=cast_processes(plan) if processes is None else processes)
        try:
            out_bytes = 0
            for dest, sources in groups.items():
                layout = layouts[dest]
                f = writer.open_tensor_file(dest, layout, like=sources[0].path)
                out_bytes += layout.size - len(layout.head)
                batch = OutputBatch(bg, f)
                pos, i = len(layout.head), 0  # where the data so far ends; the entry's index
                for header in sources:
                    reader = SourceReader(ckpt, header, chunk_bytes, f, head_rows)
                    measured = []
                    with reader:
                        for t, entry, w in outputs_of[header.path]:
                            if layout.starts[i] > pos:  # alignment padding (Burnpack), in order
                                casts.copy(np.zeros(layout.starts[i] - pos, np.uint8))
                            reader.out_pos = layout.starts[i]
                            pos, i = layout.starts[i] + entry.nbytes, i + 1
                            if w is not None:  # codes and scales in, the weight's values out
                                assert deq is not None
                                plan = deq.plan(ckpt, w)
                                if len(w.shape) == 2:  # rows of a matrix (a bias is not quantized)
                                    plan.head_rows = head_rows.get(w.codes.name, 0)
                                acc = ErrorAccumulator(plan.compute, target) if report else None
                                start, src_bytes = done, sum(p.nbytes for p in w.stored)
                                for raw, r0, r1 in raw_chunks(ckpt, plan, chunk_bytes):
                                    casts.submit_call(
                                        dequantize_and_cast, acc, plan, raw, r0, r1, target, acc
                                    )
                                    for data in casts.ready():
                                        batch.add(data)
                                    # its share of the stored bytes: the last rows end it
                                    done = start + src_bytes * r1 // max(1, plan.rows)
                                    yield Progress(done, total, w.name)
                                if done < start + src_bytes:  # no rows ([0, n]): scales only
                                    done = start + src_bytes
                                    yield Progress(done, total, w.name)
                                measured.append((entry, w, acc))
                                continue
                            dst = dst_of[t.name]
                            acc = (
                                ErrorAccumulator(t.dtype, dst)
                                if report and dst != t.dtype
                                else None
                            )
                            yield Progress(done, total, t.name)
                            for n in reader.queue(t, dst, acc, casts):  # cast on every core
                                for data in casts.ready():
                                    batch.add(data)
                                done += n
                                yield Progress(done, total, t.name)
                            if dst != t.dtype:  # the report lists the tensors cast
                                measured.append((entry, t, acc))
                        for data in casts.ready(drain=True):
                            batch.add(data)
                    result.tensors.extend(report_entry(e, src, acc) for e, src, acc in measured)
                batch.flush()
                bg.close()  # everything of this file written before it is fsynced
                f.finish()
                bg = BackgroundWriter()
            bg.close()
            if index_out is not None:
                writer.write_text(index_out, index_text(ckpt, out_bytes, deq), like=ckpt.index_path)
            if report_path is not None:  # committed last: it describes the files above
                writer.write_text(report_path, result.to_json_text(), like=ckpt.files[0].path)
            writer.commit()
        finally:
            try:
                casts.close()  # may raise a Ctrl-C it held while the workers stopped
            finally:
                bg.stop()
    return result
