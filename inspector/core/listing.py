"""A checkpoint's table as a document: ``list --json`` and the window's "Export table" write the
same rows (one per tensor, one per quantized weight), and the window also writes them as CSV."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .checkpoint import Checkpoint
from .dtypes import DType
from .formats.burnpack import BurnpackFacts
from .json_output import rows_document
from .layout import TensorInfo
from .quant.layout import QuantizedWeight, QuantLayout
from .quant.listing import logical_items
from .summary import matches_target, tensor_status
from .training_layout import training_left_out
from .unknown_objects import unknown_imports

CSV_COLUMNS = ("name", "dtype", "shape", "params", "nbytes", "status", "file")


def listing_rows(
    items: Iterable[TensorInfo | QuantizedWeight],
    file_names: Mapping[str, str],
    target: DType,
    stats: Mapping[str, Any] | None = None,
    storage: Mapping[str, Any] | None = None,
    burn: BurnpackFacts | None = None,
    file_dims: Mapping[str, tuple[int, ...]] | None = None,
) -> Iterator[dict[str, object]]:
    """The ``list --json`` rows, made while they are written (no list of 200k dicts).

    ``burn``: a Burnpack file's facts, whose ``param_id`` and burn dtype name (where it is not
    the plain one: ``Flex32``, ``Bool(Native)``) each row then carries; ``file_dims``: a GGUF
    file's dimensions in its own order (innermost first), as ``gguf_dims``."""
    file_dims = file_dims or {}
    matches: dict[str, bool | None] = {}
    param_ids = burn.param_ids if burn else {}
    burn_dtypes = burn.burn_dtypes if burn else {}
    for t in items:
        if isinstance(t, QuantizedWeight):
            gguf_dims = file_dims.get(t.name)
            yield {
                "name": t.name,
                "dtype": t.stored_dtype,
                "shape": t.shape,
                "file": file_names[t.codes.file],
                "nbytes": t.nbytes,
                "matches_target": None,
                "status": "quantized",
                "quant": t.to_json(),
                **(stats[t.name].to_json() if stats and t.name in stats else {}),
                **({"storage": storage[t.name].to_json()} if storage and t.name in storage else {}),
                **({"gguf_dims": list(gguf_dims)} if gguf_dims is not None else {}),
            }
            continue
        start, end = t.data_offsets
        m = matches.get(t.dtype_name, ...)
        if m is ...:  # one answer per dtype: 200k rows, a few dtypes
            m = matches[t.dtype_name] = matches_target(t, target)
        row: dict[str, object] = {
            "name": t.name,
            "dtype": t.dtype_name,
            "shape": t.shape,  # a tuple: written as the same JSON array
            "file": file_names[t.file],
            "nbytes": end - start,
            "matches_target": m,
        }
        if t.name in file_dims:
            row["gguf_dims"] = list(file_dims[t.name])
        if t.name in param_ids:
            row["param_id"] = param_ids[t.name]
        if t.name in burn_dtypes:
            row["burn_dtype"] = burn.dtype_text(t.name, t.dtype_name)
        if stats:
            row.update(stats[t.name].to_json())
        yield row


def listing_document(
    ckpt: Checkpoint,
    target: DType,
    quant: QuantLayout | None,
    items: Iterable[TensorInfo | QuantizedWeight] | None = None,
    stats: Mapping[str, Any] | None = None,
    storage: Mapping[str, Any] | None = None,
) -> str:
    """The ``list --json`` document: rows, then target, metadata, training, values, a pickle's
    unknown imports, quantization, and for Burnpack its version and scalars."""
    from .formats.burnpack import burnpack_facts
    from .formats.gguf import gguf_facts
    from .formats.torch_pickle import pickle_facts

    file_names = {h.path: os.path.basename(h.path) for h in ckpt.files}
    extra: dict[str, object] = {"target": target.name, "metadata": ckpt.metadata}
    if ckpt.training is not None:
        extra["training"] = training_left_out(ckpt)
    values = [v for h in ckpt.files if (facts := pickle_facts(h)) for v in facts.values]
    if values:
        extra["values"] = [{"name": v.name, "value": v.text} for v in values]
    unknown = unknown_imports(ckpt)
    if unknown:  # built as inert placeholders, never executed
        extra["unknown_imports"] = unknown
    if quant is not None:
        extra["quantization"] = quant.to_json()
    gguf = gguf_facts(ckpt.files[0])
    if gguf is not None:
        extra["gguf"] = {
            "version": gguf.version,
            "architecture": gguf.architecture,
            "types": gguf.type_counts(),
            "metadata": gguf.kv_json(),
        }
    burn = burnpack_facts(ckpt.files[0]) if len(ckpt.files) == 1 else None
    if burn is not None:
        extra["burnpack"] = {"version": burn.version, "scalars": burn.scalar_values()}
    if items is None:
        items = logical_items(ckpt.tensors, quant)
    dims = {k: v for h in ckpt.files if (g := gguf_facts(h)) for k, v in g.dims.items()}
    rows = listing_rows(items, file_names, target, stats, storage, burn, dims)
    return rows_document(rows, extra)


def listing_csv(items: Iterable[TensorInfo | QuantizedWeight], target: DType) -> str:
    """The table as CSV, one row per tensor or quantized weight, for a spreadsheet."""
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(CSV_COLUMNS)
    for t in items:
        if isinstance(t, QuantizedWeight):
            name, dtype, shape, params, nbytes, status, file = (
                t.name, t.stored_dtype, t.shape, t.params, t.nbytes, "quantized", t.codes.file
            )  # fmt: skip
        else:
            name, dtype, shape, params, nbytes, file = (
                t.name, t.dtype_name, t.shape, t.numel, t.nbytes, t.file
            )  # fmt: skip
            status = tensor_status(t, target).value
        out.writerow([name, dtype, "x".join(map(str, shape)), params, nbytes, status,
                      os.path.basename(file)])  # fmt: skip
    return buf.getvalue()
