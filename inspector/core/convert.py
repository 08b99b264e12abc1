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

import numpy as np

from .cast import can_cast, cast_array
from .checkpoint import Checkpoint
from .dtypes import DType
from .errors import CheckpointError
from .header import TensorInfo
from .precision import ErrorAccumulator
from .progress import Job, Progress
from .writer import AtomicWriter, BackgroundWriter, TensorEntry

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

    def to_json(self) -> dict[str, Any]:
        return {
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


@dataclass
class CastReport:
    """One entry per tensor whose dtype changed, in checkpoint order."""

    target: str
    tensors: list[TensorCastReport] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "tensors": [t.to_json() for t in self.tensors]}


def plan_cast(
    ckpt: Checkpoint, target: DType, keep: Sequence[str] = ()
) -> list[tuple[TensorInfo, DType]]:
    """Output dtype of every tensor, in checkpoint order.

    Floats go to ``target`` unless a ``keep`` glob matches the name (``fnmatch``, case-sensitive);
    integer, bool and complex tensors stay as they are, and so do the float formats torch itself
    cannot cast exactly from (F4, F6, F8_E8M0, *FNUZ): rewriting them would change their meaning.
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
    """Source file → output file. A folder ``out`` for single files means ``out/<same name>``."""
    if not ckpt.is_sharded:
        src = ckpt.files[0].path
        if os.path.isdir(out):
            out = os.path.join(out, os.path.basename(src))
        return {src: out}
    if os.path.exists(out) and not os.path.isdir(out):
        raise CheckpointError(out, "is a file; a sharded checkpoint is written to a folder")
    writer.make_folder(out)
    folder = os.path.dirname(os.path.abspath(ckpt.index_path or ""))
    paths = {}
    for h in ckpt.files:
        dest = os.path.join(out, os.path.relpath(h.path, folder))
        writer.make_folder(os.path.dirname(dest))
        paths[h.path] = dest
    return paths


def _index_text(ckpt: Checkpoint, total_size: int) -> str:
    """The input index with ``metadata.total_size`` updated; shard names and other keys kept."""
    assert ckpt.index_path is not None
    try:
        with open(ckpt.index_path, encoding="utf-8") as f:
            index = json.load(f)
    except (OSError, ValueError) as e:
        raise CheckpointError(ckpt.index_path, f"cannot read the index again: {e}") from None
    meta = index.get("metadata")
    index["metadata"] = {**(meta if isinstance(meta, dict) else {}), "total_size": total_size}
    folder = os.path.dirname(os.path.abspath(ckpt.index_path))
    index["weight_map"] = {
        name: shard
        for name, shard in index["weight_map"].items()
        if name in ckpt  # the opener checked the index and shards agree
    }
    for t in ckpt.tensors:
        index["weight_map"].setdefault(t.name, os.path.relpath(t.file, folder))
    return json.dumps(index, indent=2) + "\n"


def cast_checkpoint(
    ckpt: Checkpoint,
    target: DType,
    out: str,
    keep: Sequence[str] = (),
    report: bool = True,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
) -> Job[CastReport]:
    """Write ``ckpt`` with float tensors cast to ``target`` to ``out`` (a file, or a folder if sharded).

    Yields ``Progress`` between chunks; returns the :class:`CastReport`. Precision is measured on
    the same chunks as they are cast (``report=False`` skips that arithmetic). Header order, data
    order and ``__metadata__`` follow the source. Nothing appears at ``out`` until every byte is
    on disk; sharded outputs rename all shards, then the index.
    """
    out = os.fspath(out)
    plan = plan_cast(ckpt, target, keep)
    dst_of = {t.name: d for t, d in plan}
    total = ckpt.total_nbytes
    done = 0
    result = CastReport(target.name)
    protect = [h.path for h in ckpt.files] + ([ckpt.index_path] if ckpt.index_path else [])
    with AtomicWriter(protect) as writer:
        paths = _output_paths(ckpt, out, writer)
        bg = BackgroundWriter()
        try:
            out_bytes = 0
            for header in ckpt.files:
                entries = [
                    TensorEntry(t.name, dst_of[t.name], tuple(t.shape)) for t in header.tensors
                ]
                out_bytes += sum(e.nbytes for e in entries)
                f = writer.open_safetensors(paths[header.path], entries, header.metadata)
                for t in header.tensors:
                    dst = dst_of[t.name]
                    acc = ErrorAccumulator(t.dtype, dst) if report and dst != t.dtype else None
                    yield Progress(done, total, t.name)
                    if dst == t.dtype:  # copied byte for byte (packed dtypes stay packed)
                        for raw in _raw_chunks(ckpt, t, chunk_bytes):
                            bg.put(f, raw)
                            done += raw.nbytes
                            yield Progress(done, total, t.name)
                        continue
                    for chunk in ckpt.iter_chunks(t, chunk_bytes):
                        cast = cast_array(
                            chunk, t.dtype, dst
                        )  # a new array: the read buffer is reused
                        if acc is not None:
                            acc.update(chunk, cast)
                        bg.put(f, cast)
                        done += chunk.nbytes
                        yield Progress(done, total, t.name)
                    result.tensors.append(_entry(t, dst, acc))
                bg.close()  # everything of this file written before it is fsynced
                f.finish()
                bg = BackgroundWriter()
            bg.close()
            if ckpt.is_sharded:
                index_out = os.path.join(out, os.path.basename(ckpt.index_path or ""))
                writer.write_text(index_out, _index_text(ckpt, out_bytes))
            writer.commit()
        finally:
            bg.stop()
    return result


def _entry(t: TensorInfo, dst: DType, acc: ErrorAccumulator | None) -> TensorCastReport:
    rep = TensorCastReport(t.name, t.dtype.name, dst.name)
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


def _raw_chunks(ckpt: Checkpoint, t: TensorInfo, chunk_bytes: int):
    """The tensor's bytes as fresh uint8 arrays of at most ``chunk_bytes`` (safe to queue)."""
    start, end = ckpt.byte_range(t)
    with open(t.file, "rb", buffering=0) as fh:
        fh.seek(start)
        pos = start
        while pos < end:
            n = min(chunk_bytes, end - pos)
            buf = np.empty(n, dtype=np.uint8)
            got = fh.readinto(memoryview(buf))
            while got < n:
                more = fh.readinto(memoryview(buf)[got:])
                if not more:
                    raise CheckpointError(
                        t.file, "file is shorter than its header says (truncated while reading)"
                    )
                got += more
            pos += n
            yield buf
