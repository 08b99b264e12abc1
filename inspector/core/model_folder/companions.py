"""The files beside the weights that make a folder a loadable model: config, generation config,
tokenizer, chat template, model card. A folder cast copies them so ``from_pretrained(out)`` works,
with ``config.json``'s dtype set to the cast target."""

from __future__ import annotations

import os

from ..dtypes import DType
from ..writer import AtomicWriter
from .config import CONFIG_NAME, config_with_dtype

WEIGHT_SUFFIXES = (
    ".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf", ".h5", ".msgpack", ".onnx", ".pkl",
)  # fmt: skip
MAX_COMPANION_BYTES = 512 << 20  # a tokenizer.json is tens of MB; bigger files are weights


def companion_files(folder: str) -> list[str]:
    """Top-level files that are not weights, indexes, hidden files or our own temporaries."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out = []
    for name in names:
        path = os.path.join(folder, name)
        if (
            name.startswith(".")
            or name.lower().endswith(WEIGHT_SUFFIXES)
            or (".index" in name and name.endswith(".json"))
            or not os.path.isfile(path)
            or os.path.getsize(path) > MAX_COMPANION_BYTES
        ):
            continue
        out.append(name)
    return out


def copy_companions(
    writer: AtomicWriter, src_folder: str, out_folder: str, target: DType | None
) -> list[str]:
    """Reserve and write every companion into ``out_folder`` (committed with the weights).
    ``target`` None leaves config.json as it is (nothing was cast)."""
    names = companion_files(src_folder)
    for name in names:
        writer.reserve(os.path.join(out_folder, name), what="model file")
    for name in names:
        src, dest = os.path.join(src_folder, name), os.path.join(out_folder, name)
        with open(src, "rb") as f:
            data = f.read(MAX_COMPANION_BYTES + 1)
        if name == CONFIG_NAME and target is not None:
            try:
                writer.write_text(dest, config_with_dtype(data.decode("utf-8"), target), like=src)
                continue
            except (ValueError, UnicodeDecodeError, AttributeError, TypeError, RecursionError):
                pass  # not a JSON object: copied as it is (lint reports it)
        pending = writer.open(dest, like=src)
        pending.write(data)
        pending.finish()
    return names
