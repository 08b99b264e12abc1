"""The cast job: stream a checkpoint into a copy with its float tensors cast, durably.

A generator per :mod:`inspector.core.progress`: it yields ``Progress`` (source bytes done / total)
between bounded chunks and returns a :class:`CastReport`. Closing it mid-way (cancel) or any error
leaves no output and no temp file; the destination keeps what it had.
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..checkpoint import Checkpoint
from ..dtypes import DType
from ..errors import CheckpointError
from ..formats.safetensors import FORMAT_NAME as SAFETENSORS
from ..formats.torch_pickle import pickle_facts
from ..json_output import json_text, rows_document, with_depth_room
from ..layout import TensorInfo
from ..model_folder.companions import copy_companions
from ..model_folder.config import model_folder
from ..progress import Job, Progress
from ..quant.layout import QuantizedWeight
from ..quant.rows import raw_chunks
from ..save.output_names import (
    PICKLE_METADATA,
    PICKLE_SUFFIXES,
    safetensors_index_name,
    safetensors_name,
)
from ..save.writeback import BackgroundWriter
from ..save.writer import AtomicWriter, TensorEntry
from ..training_layout import training_left_out
from .dequantize import Dequantizing, dequantize_and_cast, dequantizing
from .kernels import can_cast
from .pool import ChunkCaster
from .precision import ErrorAccumulator
from .stream import OutputBatch, SourceReader, cast_processes

DEFAULT_CHUNK_BYTES = 8 << 20


@dataclass
class TensorCastReport:
    """What casting one tensor cost. Numbers are None when the job ran with ``report=False``."""

    name: str
    from_: str
    to: str
    max_abs_err: float | None = None
    mean_abs_err: float | None = None
    max_rel_err: float | None = None
    overflow: int | None = None
    underflow: int | None = None
    nan: int | None = None
    lossless: bool | None = None
    dequantized: str | None = None  # the scheme whose codes were dequantized (not a dtype cast)

    def to_json(self) -> dict[str, Any]:
        doc = {
            "name": self.name,
            "from": self.from_,
            "to": self.to,
            "max_abs_err": self.max_abs_err,
            "mean_abs_err": self.mean_abs_err,
            "max_rel_err": self.max_rel_err,
            "overflow": self.overflow,
            "underflow": self.underflow,
            "nan": self.nan,
            "lossless": self.lossless,
        }
        if self.dequantized is not None:
            doc["dequantized"] = self.dequantized
        return doc


@dataclass
class CastReport:
    """One entry per tensor whose dtype changed, in checkpoint order."""

    target: str
    tensors: list[TensorCastReport] = field(default_factory=list)
    # tensors of a pickle that safetensors cannot hold (complex128…): {"name", "why"}, not written
    left_out: list[dict[str, str]] = field(default_factory=list)
    # a training checkpoint cast as its model's weights: what was not written
    training: dict[str, Any] | None = None

    def totals(self) -> dict[str, int]:
        """``tensors_cast``, ``lossless`` and the overflow/underflow/NaN value counts, summed."""
        measured = [t for t in self.tensors if t.overflow is not None]
        return {
            "tensors_cast": len(self.tensors),
            "lossless": sum(1 for t in measured if t.lossless),
            "overflow": sum(t.overflow or 0 for t in measured),
            "underflow": sum(t.underflow or 0 for t in measured),
            "nan": sum(t.nan or 0 for t in measured),
        }

    def _head(self) -> dict[str, Any]:
        head: dict[str, Any] = {"target": self.target, "totals": self.totals()}
        if self.left_out:
            head["left_out"] = self.left_out
        if self.training is not None:
            head["training"] = self.training
        return head

    def to_json(self) -> dict[str, Any]:
        return {**self._head(), "tensors": [t.to_json() for t in self.tensors]}

    def to_json_text(self) -> str:
        """The ``--report`` document: strict JSON, one tensor per line."""
        return rows_document([t.to_json() for t in self.tensors], self._head())


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


def _output_paths(ckpt: Checkpoint, out: str, writer: AtomicWriter) -> dict[str, str]:
    """Source file → output file. A folder ``out`` for single files means ``out/<same name>``.

    A sharded checkpoint goes to the folder ``out``, shards at the paths the index gives them
    (sub-folders included), so the output folder opens like the input one.
    """
    pickled = ckpt.files[0].format != SAFETENSORS
    if not ckpt.is_sharded and ckpt.folder is None:
        src = ckpt.files[0].path
        if os.path.isdir(out):
            name = os.path.basename(src)
            out = os.path.join(out, safetensors_name(name) if pickled else name)
        elif pickled and out.lower().endswith(PICKLE_SUFFIXES):
            raise CheckpointError(
                out, "the output is safetensors (a pickle input is converted); name it .safetensors"
            )
        return {src: out}
    if os.path.exists(out) and not os.path.isdir(out):
        raise CheckpointError(out, "is a file; a sharded checkpoint is written to a folder")
    if out.endswith(".safetensors") and not os.path.exists(out):
        what = f"has {len(ckpt.files)} shards" if ckpt.is_sharded else "is a model folder"
        raise CheckpointError(
            out,
            f"the input {what}, so the output is a folder (weights, index and model files); "
            "give a folder name, not a .safetensors file name",
        )
    writer.make_folder(out)
    folder = os.path.dirname(os.path.abspath(ckpt.index_path or ckpt.files[0].path))
    paths = {}
    for h in ckpt.files:
        rel = os.path.relpath(h.path, folder)
        dest = os.path.join(out, safetensors_name(rel) if h.format != SAFETENSORS else rel)
        writer.make_folder(os.path.dirname(dest))
        paths[h.path] = dest
    return paths


def _index_text(ckpt: Checkpoint, total_size: int, deq: Dequantizing | None) -> str:
    """The input index (as read when opened) with ``metadata.total_size`` updated (and a
    dequantized weight's companions gone, its codes under the weight's name)."""
    assert ckpt.index_path is not None and ckpt.index is not None
    index = dict(ckpt.index)
    meta = index.get("metadata")
    index["metadata"] = {**(meta if isinstance(meta, dict) else {}), "total_size": total_size}
    # the opener checked that the index and the shards agree name for name
    index["weight_map"] = {
        name: shard for name, shard in index["weight_map"].items() if name in ckpt
    }
    if deq is not None:
        renamed = ((deq.output_name(k), v) for k, v in index["weight_map"].items())
        index["weight_map"] = {k: v for k, v in renamed if k is not None}
    if ckpt.files[0].format != SAFETENSORS:  # converted: the shards have new names
        index["weight_map"] = {k: safetensors_name(v) for k, v in index["weight_map"].items()}
    try:
        # the layout transformers writes
        return with_depth_room(lambda: json.dumps(index, indent=2)) + "\n"
    except RecursionError:  # the indenting encoder recurses more per level than msgspec
        return json_text(index) + "\n"


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
    protect = [h.path for h in ckpt.files] + ([ckpt.index_path] if ckpt.index_path else [])
    with AtomicWriter(protect, root=out if ckpt.is_sharded else None) as writer:
        paths = _output_paths(ckpt, out, writer)
        outputs_of = {h.path: _outputs(h.tensors, dst_of, target, deq) for h in ckpt.files}
        if deq is not None and ckpt.is_sharded:  # a shard of scales only: nothing left to write
            paths = {p: d for p, d in paths.items() if outputs_of[p]}
        for dest in paths.values():
            writer.reserve(dest)
        index_out = None
        if ckpt.is_sharded:
            index_out = os.path.join(
                out, safetensors_index_name(os.path.basename(ckpt.index_path or ""))
            )
            writer.reserve(index_out)
        if report_path is not None:
            report_path = os.fspath(report_path)
            writer.reserve(report_path, what="report")
            report = True
        if ckpt.is_sharded or ckpt.folder is not None:  # a loadable model folder comes out
            any_cast = deq is not None or any(d != t.dtype for t, d in plan)
            copy_companions(
                writer, model_folder(ckpt.path), out, target if any_cast else None, deq is not None
            )
        bg = BackgroundWriter()
        casts = ChunkCaster(processes=cast_processes(plan) if processes is None else processes)
        try:
            out_bytes = 0
            for header in ckpt.files:
                if header.path not in paths:
                    done += sum(t.nbytes for t in header.tensors)  # companions, read per weight
                    continue
                outputs = outputs_of[header.path]
                entries = [e for _t, e, _w in outputs]
                out_bytes += sum(e.nbytes for e in entries)
                meta = header.metadata if header.format == SAFETENSORS else PICKLE_METADATA
                f = writer.open_safetensors(paths[header.path], entries, meta, like=header.path)
                batch = OutputBatch(bg, f)
                reader = SourceReader(ckpt, header, chunk_bytes, f)
                measured = []
                with reader:
                    for t, entry, w in outputs:
                        if w is not None:  # codes and scales in, the weight's values out
                            assert deq is not None
                            plan = deq.plan(ckpt, w)
                            acc = ErrorAccumulator(plan.compute, target) if report else None
                            start, src_bytes = done, sum(p.nbytes for p in w.stored)
                            for raw, r0, r1 in raw_chunks(ckpt, plan, chunk_bytes):
                                casts.submit_call(
                                    dequantize_and_cast, acc, plan, raw, r0, r1, target, acc
                                )
                                for data in casts.ready():
                                    batch.add(data)
                                done += src_bytes * (r1 - r0) // max(1, plan.rows)
                                yield Progress(done, total, w.name)
                            done = start + src_bytes
                            measured.append((entry, w, acc))
                            reader.out_pos += entry.nbytes
                            continue
                        dst = dst_of[t.name]
                        acc = ErrorAccumulator(t.dtype, dst) if report and dst != t.dtype else None
                        yield Progress(done, total, t.name)
                        for n in reader.queue(t, dst, acc, casts):  # cast on every core
                            for data in casts.ready():
                                batch.add(data)
                            done += n
                            yield Progress(done, total, t.name)
                        reader.out_pos += entry.nbytes
                        if dst != t.dtype:  # the report lists the tensors cast
                            measured.append((entry, t, acc))
                    for data in casts.ready(drain=True):
                        batch.add(data)
                result.tensors.extend(_entry(e, src, acc) for e, src, acc in measured)
                batch.flush()
                bg.close()  # everything of this file written before it is fsynced
                f.finish()
                bg = BackgroundWriter()
            bg.close()
            if index_out is not None:
                writer.write_text(
                    index_out, _index_text(ckpt, out_bytes, deq), like=ckpt.index_path
                )
            if report_path is not None:  # committed last: it describes the files above
                writer.write_text(report_path, result.to_json_text(), like=ckpt.files[0].path)
            writer.commit()
        finally:
            try:
                casts.close()  # may raise a Ctrl-C it held while the workers stopped
            finally:
                bg.stop()
    return result


def _outputs(
    tensors: Sequence[TensorInfo],
    dst_of: dict[str, DType],
    target: DType,
    deq: Dequantizing | None,
) -> list[tuple[TensorInfo, TensorEntry, QuantizedWeight | None]]:
    """What one file's output holds, in its order: each tensor as planned, or (quantized) each
    weight's values where its codes were, and no companions."""
    out = []
    for t in tensors:
        w = deq.weight(t.name) if deq is not None else None
        if w is not None:
            out.append((t, TensorEntry(w.name, target, tuple(w.shape)), w))
        elif deq is None or deq.output_name(t.name) is not None:
            out.append((t, TensorEntry(t.name, dst_of[t.name], tuple(t.shape)), None))
    return out


def _entry(
    e: TensorEntry, src: TensorInfo | QuantizedWeight, acc: ErrorAccumulator | None
) -> TensorCastReport:
    if isinstance(src, QuantizedWeight):
        rep = TensorCastReport(e.name, src.codes.dtype.name, e.dtype.name)
        rep.dequantized = src.scheme.value
    else:
        rep = TensorCastReport(e.name, src.dtype.name, e.dtype.name)
    if acc is not None:
        s = acc.result()
        rep.max_abs_err = s.max_abs_err
        rep.mean_abs_err = s.mean_abs_err
        rep.max_rel_err = s.max_rel_err
        rep.overflow = s.overflow
        rep.underflow = s.underflow
        rep.nan = s.nan
        rep.lossless = s.lossless
    return rep
