"""Where a cast writes and what each output file holds: paths (a file, a folder of shards, or
one Burnpack file for everything), each output's tensors and metadata, the index."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ... import __version__
from ..burn_hint import BURN_LAYOUT, PYTORCH_LAYOUT, has_pytorch_layout
from ..dtypes import DType
from ..errors import CheckpointError
from ..formats.burnpack import FORMAT_NAME as BURNPACK
from ..formats.burnpack import burnpack_facts
from ..formats.safetensors import FORMAT_NAME as SAFETENSORS
from ..json_output import json_text, with_depth_room
from ..layout import Header, TensorEntry, TensorInfo
from ..save.output_names import (
    PICKLE_METADATA,
    PICKLE_SUFFIXES,
    safetensors_index_name,
    safetensors_name,
)
from ..save.tensor_layout import (
    FileLayout,
    OutputFormat,
    burnpack_layout,
    output_format,
    safetensors_layout,
)

if TYPE_CHECKING:
    from ..checkpoint import Checkpoint
    from ..quant.layout import QuantizedWeight
    from ..save.writer import AtomicWriter
    from .dequantize import Dequantizing

_PRODUCER = "checkpoint-inspector"


def _kept_name(rel: str, fmt: str) -> str:
    """A source file's name in a folder output: safetensors and Burnpack keep theirs, a pickle
    is converted to safetensors under the name transformers gives it."""
    return rel if fmt in (SAFETENSORS, BURNPACK) else safetensors_name(rel)


def output_paths(ckpt: Checkpoint, out: str, writer: AtomicWriter) -> dict[str, str]:
    """Source file → output file. A folder ``out`` for single files means ``out/<same name>``.

    A ``.bpk`` output holds every tensor, whatever the source (burn loads one file). A sharded
    checkpoint otherwise goes to the folder ``out``, shards at the paths the index gives them
    (sub-folders included), so the output folder opens like the input one.
    """
    if is_one_burnpack(out):
        return {h.path: out for h in ckpt.files}
    fmt = ckpt.files[0].format
    if len(ckpt.files) > 1 and not ckpt.is_sharded:  # a GGUF split series: one output file
        if os.path.isdir(out):
            stem = re.sub(r"-\d{5}-of-\d{5}(\.gguf)$", r"\1", os.path.basename(ckpt.path))
            out = os.path.join(out, _kept_name(stem, fmt))
        return {h.path: out for h in ckpt.files}
    if not ckpt.is_sharded and ckpt.folder is None:
        src = ckpt.files[0].path
        if os.path.isdir(out):
            out = os.path.join(out, _kept_name(os.path.basename(src), fmt))
        elif fmt not in (SAFETENSORS, BURNPACK) and out.lower().endswith(PICKLE_SUFFIXES):
            raise CheckpointError(
                out,
                "the output is safetensors or Burnpack (a pickle input is converted); "
                "name it .safetensors or .bpk",
            )
        return {src: out}
    if os.path.exists(out) and not os.path.isdir(out):
        raise CheckpointError(out, "is a file; a sharded checkpoint is written to a folder")
    if out.endswith(".safetensors") and not os.path.exists(out):
        what = f"has {len(ckpt.files)} shards" if ckpt.is_sharded else "is a model folder"
        raise CheckpointError(
            out,
            f"the input {what}, so the output is a folder (weights, index and model files); "
            "give a folder name, or a .bpk file name for one Burnpack file",
        )
    writer.make_folder(out)
    folder = os.path.dirname(os.path.abspath(ckpt.index_path or ckpt.files[0].path))
    paths = {}
    for h in ckpt.files:
        dest = os.path.join(out, _kept_name(os.path.relpath(h.path, folder), h.format))
        writer.make_folder(os.path.dirname(dest))
        paths[h.path] = dest
    return paths


def is_one_burnpack(out: str) -> bool:
    """Whether ``out`` names one Burnpack file, which holds every tensor of any source."""
    return output_format(out) is OutputFormat.BURNPACK and not os.path.isdir(out)


def output_layout(
    dest: str, entries: Sequence[TensorEntry], sources: Sequence[Header]
) -> FileLayout:
    """The layout of one output written from ``sources``: its format by its name, its metadata
    from the (first) source, a Burnpack source's param ids, scalars and dtype names kept."""
    src = sources[0]
    if output_format(dest) is OutputFormat.BURNPACK:
        facts = burnpack_facts(src) if len(sources) == 1 else None
        if facts is not None:
            return burnpack_layout(dest, entries, src.metadata, facts)
        meta = {"format": "burnpack", "producer": _PRODUCER, "version": __version__}
        if has_pytorch_layout(src.format, src.metadata):  # burn loads it via PyTorchToBurnAdapter
            meta |= PYTORCH_LAYOUT
        return burnpack_layout(dest, entries, meta)
    if src.format == SAFETENSORS:
        meta = src.metadata
    elif src.format == BURNPACK:  # burn's own SafetensorsStore names the format so
        layout = PYTORCH_LAYOUT if has_pytorch_layout(src.format, src.metadata) else BURN_LAYOUT
        meta = {**(src.metadata or {}), "format": "safetensors"} | layout
    else:
        meta = PICKLE_METADATA
    return safetensors_layout(entries, meta)


def index_text(ckpt: Checkpoint, total_size: int, deq: Dequantizing | None) -> str:
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
    fmt = ckpt.files[0].format  # converted shards have new names: the rule output_paths uses
    index["weight_map"] = {k: _kept_name(v, fmt) for k, v in index["weight_map"].items()}
    try:
        # the layout transformers writes
        return with_depth_room(lambda: json.dumps(index, indent=2)) + "\n"
    except RecursionError:  # the indenting encoder recurses more per level than msgspec
        return json_text(index) + "\n"


def index_output(ckpt: Checkpoint, out: str) -> str:
    return os.path.join(out, safetensors_index_name(os.path.basename(ckpt.index_path or "")))


def file_outputs(
    tensors: Sequence[TensorInfo],
    dst_of: dict[str, DType],
    target: DType,
    deq: Dequantizing | None,
    renames: Mapping[str, str] | None = None,
) -> list[tuple[TensorInfo, TensorEntry, QuantizedWeight | None]]:
    """What one file's output holds, in its order: each tensor as planned, or (quantized) each
    weight's values where its codes were, and no companions. ``renames``: output names (a
    GGUF file's tensors under their HF names)."""
    renames = renames or {}
    out = []
    for t in tensors:
        w = deq.weight(t.name) if deq is not None else None
        if w is not None:
            name = renames.get(w.name, w.name)
            out.append((t, TensorEntry(name, target, tuple(w.shape)), w))
        elif deq is None or deq.output_name(t.name) is not None:
            name = renames.get(t.name, t.name)
            out.append((t, TensorEntry(name, dst_of[t.name], tuple(t.shape)), None))
    return out


def hf_renames(ckpt: Checkpoint) -> tuple[dict[str, str], dict[str, int]]:
    """A GGUF checkpoint's output names (its tensors under the HF names they came from, when
    the architecture is known; a name two tensors would share is left as it is) and the Q/K
    rows to put back in order. Empty for every other checkpoint."""
    from ..gguf_names import gguf_naming

    naming = gguf_naming(ckpt)
    if naming is None:
        return {}, {}
    wanted = {t.name: naming.hf_name(t.name) for t in ckpt.tensors}
    taken: dict[str, int] = {}
    for hf in wanted.values():
        taken[hf] = taken.get(hf, 0) + 1
    renames = {k: v for k, v in wanted.items() if taken[v] == 1 and v != k}
    return renames, dict(naming.head_rows)
