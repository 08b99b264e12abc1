"""The quantize job: a checkpoint's Linear weights quantized into a compressed-tensors model
folder, streamed and committed like every save (nothing appears until all of it is on disk).

The output folder mirrors the source: the same weight files (a pickle becomes safetensors) with
each quantized weight replaced by its tensors, the index remapped, the companions copied and
``config.json`` carrying the ``quantization_config``. A generator per :mod:`..progress`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import Executor, ThreadPoolExecutor

import numpy as np

from ..checkpoint import Checkpoint
from ..errors import CheckpointError
from ..formats.safetensors import FORMAT_NAME as SAFETENSORS
from ..layout import Header, TensorEntry, TensorInfo
from ..model_folder.companions import WEIGHT_SUFFIXES, copy_companions, read_by_a_save
from ..model_folder.config import CONFIG_NAME, MAX_CONFIG_BYTES, model_folder
from ..progress import Job, Progress
from ..quant.compare import ErrorFigures
from ..save.output_names import PICKLE_METADATA, safetensors_index_name, safetensors_name
from ..save.tensor_layout import OutputFormat, output_format, safetensors_layout
from ..save.writer import AtomicWriter, TensorFile
from .checks import plans_for, refuse_unquantizable
from .report import QuantizedWeightReport, QuantizeReport, skipped_weights
from .schemes import COMPRESSED_TENSORS_VERSION, Scheme
from .stream import BIG, WeightAbsmax, parts_of, quantized_blocks, weight_absmax
from .targets import DEFAULT_IGNORE, QuantizePlan

WORKERS = 2  # threads quantizing blocks (numpy lets go of the GIL) while this one writes
DEFAULT_CHUNK_BYTES = 2 << 20  # a block of rows stays in the CPU's cache through ~20 passes


def absmax_of(
    ckpt: Checkpoint, plan: QuantizePlan, chunk_bytes: int, done: int, total: int
) -> Job[WeightAbsmax]:
    """NVFP4's first pass: each target's max |value| (its global scale is its fused group's);
    progress from ``done`` of the whole job's ``total``."""
    of: dict[str, float] = {}
    for t in plan.targets:
        of[t.name] = weight_absmax(ckpt, t, chunk_bytes)
        done += t.nbytes
        yield Progress(done, total, t.name)
    return WeightAbsmax(of)


def first_pass_bytes(plan: QuantizePlan) -> int:
    """What NVFP4's absolute-maximum pass reads (nothing for the other schemes)."""
    return sum(t.nbytes for t in plan.targets) if plan.fused else 0


def quantize_checkpoint(
    ckpt: Checkpoint,
    scheme: Scheme,
    out: str,
    ignore: Sequence[str] = DEFAULT_IGNORE,
    report_path: str | None = None,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    measure: bool = True,
) -> Job[QuantizeReport]:
    """Write ``ckpt`` quantized with ``scheme`` into the folder ``out``; return the report.
    ``measure`` False leaves out the precision figures (a third of the work; the preview and
    ``--report`` give them), a report file always has them.

    Refused before any work (one line): an already quantized source, an output that is not a
    folder, a checkpoint in which no weight can take the scheme.
    """
    out = os.fspath(out)
    measure = measure or report_path is not None
    (plan,) = plans_for(ckpt, [scheme], ignore)
    refuse_unquantizable(ckpt, plan)
    if output_format(out) is OutputFormat.BURNPACK or (
        os.path.exists(out) and not os.path.isdir(out)
    ):
        raise CheckpointError(
            out,
            "a quantized model is a folder (compressed-tensors safetensors and config.json); "
            "give a folder name",
        )
    report = QuantizeReport(scheme.name)
    report.skipped = skipped_weights(plan)
    _refuse_other_weights(ckpt, out)
    done = first_pass_bytes(plan)
    total = done + ckpt.total_nbytes
    yield Progress(0, total)
    gmax = (yield from absmax_of(ckpt, plan, chunk_bytes, 0, total)) if plan.fused else None
    targets = {t.name for t in plan.targets}
    beside = os.path.isfile(os.path.join(model_folder(ckpt.path), CONFIG_NAME))  # copied then
    protect = read_by_a_save(ckpt.path, [h.path for h in ckpt.files], ckpt.index_path, beside)
    with AtomicWriter(protect, root=out) as writer, ThreadPoolExecutor(WORKERS) as pool:
        writer.make_folder(out)
        dests = _output_files(ckpt, out, writer)
        if report_path is not None:  # every output path is checked before any work
            report_path = os.fspath(report_path)
            writer.reserve(report_path, what="report")
        config_text, note = _config_text(ckpt, scheme, plan)
        if note:
            report.notes.append(note)
        names: list[str] = []
        if note is None:  # a model folder (or a file beside its config.json): its files too
            names = copy_companions(
                writer, model_folder(ckpt.path), out, None, config_text=config_text
            )
        if CONFIG_NAME not in names:
            writer.reserve(os.path.join(out, CONFIG_NAME), what="model file")
            writer.write_text(os.path.join(out, CONFIG_NAME), config_text)
        weight_map: dict[str, str] = {}
        out_total = 0
        for h in ckpt.files:
            entries = _entries(h, targets, scheme)
            dest = dests[h.path]
            meta = h.metadata if h.format == SAFETENSORS else PICKLE_METADATA
            layout = safetensors_layout(entries, meta)
            f = writer.open_tensor_file(dest, layout, like=h.path)
            for e in entries:
                weight_map[e.name] = os.path.relpath(dest, out)
            out_total += layout.size - len(layout.head)
            for t in h.tensors:
                if t.name not in targets:
                    for chunk in ckpt.iter_chunks(t, chunk_bytes):
                        f.write(np.ascontiguousarray(chunk))
                        done += chunk.nbytes
                        yield Progress(done, total, t.name)
                    continue
                gscale = gmax.scale_of(plan, t) if gmax else None
                w = yield from _write_weight(
                    ckpt, t, scheme, gscale, f, pool, chunk_bytes, done, total, measure
                )
                done += t.nbytes
                report.weights.append(w)
            f.finish()
        if ckpt.is_sharded:
            index = os.path.join(
                out, safetensors_index_name(os.path.basename(ckpt.index_path or ""))
            )
            writer.reserve(index, what="index")
            writer.write_text(index, _index_text(ckpt, weight_map, out_total), like=ckpt.index_path)
        report.bytes_in = ckpt.total_nbytes
        report.bytes_out = out_total
        if report_path is not None:  # committed last: it describes the files above
            writer.write_text(report_path, report.to_json_text())
        writer.commit()
    return report


def _write_weight(
    ckpt: Checkpoint,
    t: TensorInfo,
    scheme: Scheme,
    gscale: np.float32 | None,
    f: TensorFile,
    pool: Executor,
    chunk_bytes: int,
    done: int,
    total: int,
    measure: bool,
) -> Job[QuantizedWeightReport]:
    """Stream one weight's large part, then its scales; the report entry."""
    entries = parts_of(t, scheme)
    big = BIG[scheme.kind]
    small: dict[str, list[np.ndarray]] = {e.name.rsplit(".", 1)[-1]: [] for e in entries[1:]}
    figures = ErrorFigures() if measure else None
    for q, r1 in quantized_blocks(ckpt, t, scheme, chunk_bytes, pool, gscale, measure):
        f.write(np.ascontiguousarray(q.parts[big]))
        for suffix in small:
            if suffix in q.parts:
                small[suffix].append(q.parts[suffix])
        if figures is not None:
            assert q.values is not None and q.source is not None
            figures.add(q.values, q.source)
        yield Progress(done + t.nbytes * r1 // max(1, int(t.shape[0])), total, t.name)
    for e in entries[1:]:
        suffix = e.name.rsplit(".", 1)[-1]
        if suffix == "weight_shape":
            f.write(np.array(t.shape, dtype=np.int64))
        elif suffix == "weight_global_scale":
            f.write(np.array([gscale], dtype=np.float32))
        else:
            f.write(np.ascontiguousarray(np.concatenate(small[suffix], axis=0)))
    nbytes = sum(e.nbytes for e in entries)
    return QuantizedWeightReport(
        t.name, tuple(int(d) for d in t.shape), t.dtype.name, t.nbytes, nbytes, figures
    )


def _entries(h: Header, targets: set[str], scheme: Scheme) -> list[TensorEntry]:
    out: list[TensorEntry] = []
    for t in h.tensors:
        if t.name in targets:
            out.extend(parts_of(t, scheme))
        else:
            out.append(TensorEntry(t.name, t.dtype, tuple(int(d) for d in t.shape)))
    return out


def _output_names(ckpt: Checkpoint) -> dict[str, str]:
    """Each source file's output name in the folder: its own (folders kept), a pickle's as the
    safetensors name transformers gives it; and the index's."""
    base = os.path.dirname(os.path.abspath(ckpt.index_path or ckpt.files[0].path))
    names = {}
    for h in ckpt.files:
        rel = os.path.relpath(h.path, base)
        names[h.path] = rel if h.format == SAFETENSORS else safetensors_name(rel)
    if ckpt.index_path:
        names[ckpt.index_path] = safetensors_index_name(os.path.basename(ckpt.index_path))
    return names


def _refuse_other_weights(ckpt: Checkpoint, out: str) -> None:
    """An output folder already holding weights or an index this save would not replace: a
    loader would read them beside the new ones (an old sharded model's index wins over a new
    single file)."""
    if not os.path.isdir(out):
        return
    ours = set(_output_names(ckpt).values())
    try:
        present = sorted(os.listdir(out))
    except OSError:
        return
    other = [
        n
        for n in present
        if n not in ours
        and (n.lower().endswith(WEIGHT_SUFFIXES) or (".index" in n and n.endswith(".json")))
    ]
    if other:
        listed = ", ".join(other[:3]) + (f" and {len(other) - 3} more" if len(other) > 3 else "")
        raise CheckpointError(
            out,
            f"already holds model files this save would not replace ({listed}); loaders would "
            "read them beside the new ones: choose an empty folder",
        )


def _output_files(ckpt: Checkpoint, out: str, writer: AtomicWriter) -> dict[str, str]:
    """Each source file's output path in ``out``, reserved."""
    paths = {}
    for h in ckpt.files:
        dest = os.path.join(out, _output_names(ckpt)[h.path])
        writer.make_folder(os.path.dirname(dest))
        writer.reserve(dest)
        paths[h.path] = dest
    return paths


def _config_text(ckpt: Checkpoint, scheme: Scheme, plan: QuantizePlan) -> tuple[str, str | None]:
    """config.json with the ``quantization_config``; without a config beside the source, one
    holding only that (and a note saying so)."""
    qc = scheme.quantization_config(plan.ignore_config, COMPRESSED_TENSORS_VERSION)
    path = os.path.join(model_folder(ckpt.path), CONFIG_NAME)
    note = None
    obj: dict = {}
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
        loaded = json.loads(raw)
        if isinstance(loaded, dict):
            obj = loaded
        else:
            note = "config.json beside the source is not a JSON object; it was not used"
    except FileNotFoundError:
        note = "no config.json beside the source: the output's config.json holds only quantization_config"
    except (OSError, ValueError, RecursionError):
        note = "config.json beside the source is unreadable; it was not used"
    obj["quantization_config"] = qc
    return json.dumps(obj, indent=2) + "\n", note


def _index_text(ckpt: Checkpoint, weight_map: dict[str, str], total: int) -> str:
    index = dict(ckpt.index or {})
    meta = index.get("metadata")
    index["metadata"] = {**(meta if isinstance(meta, dict) else {}), "total_size": total}
    index["weight_map"] = dict(sorted(weight_map.items()))
    return json.dumps(index, indent=2) + "\n"
