"""The files beside the weights that make a folder a loadable model: config, generation config,
tokenizer, chat template, model card. A folder cast copies them so ``from_pretrained(out)`` works,
with ``config.json``'s dtype set to the cast target."""

from __future__ import annotations

import os

from ..dtypes import DType
from ..save.writer import AtomicWriter
from .config import CONFIG_NAME, MAX_CONFIG_BYTES, config_with_dtype, model_folder

WEIGHT_SUFFIXES = (
    ".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf", ".bpk", ".h5", ".msgpack", ".onnx",
    ".pkl",
)  # fmt: skip
MAX_COMPANION_BYTES = 512 << 20  # a tokenizer.json is tens of MB; bigger files are weights
_COPY_CHUNK = 1 << 20


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


def read_by_a_save(
    checkpoint_path: str, files: list[str], index: str | None, copies_companions: bool
) -> list[str]:
    """Every file a save of this checkpoint reads, which no output may replace: the weights, the
    index, the config beside them (``--report config.json`` overwrote the source's config), and
    the companions when the save copies them."""
    folder = model_folder(checkpoint_path)
    names = [CONFIG_NAME, *(companion_files(folder) if copies_companions else ())]
    return [*files, *([index] if index else []), *(os.path.join(folder, n) for n in names)]


def copy_companions(
    writer: AtomicWriter,
    src_folder: str,
    out_folder: str,
    target: DType | None,
    dequantized: bool = False,
    config_text: str | None = None,
) -> list[str]:
    """Reserve and write every companion into ``out_folder`` (committed with the weights).
    ``target`` None leaves config.json as it is (nothing was cast); ``dequantized`` drops its
    ``quantization_config``; ``config_text`` replaces config.json (a quantized model's)."""
    names = companion_files(src_folder)
    for name in names:
        writer.reserve(os.path.join(out_folder, name), what="model file")
    for name in names:
        src, dest = os.path.join(src_folder, name), os.path.join(out_folder, name)
        if name == CONFIG_NAME and config_text is not None:
            writer.write_text(dest, config_text, like=src)
            continue
        with open(src, "rb") as f:
            if name == CONFIG_NAME and target is not None:
                text = _config_cast(f.read(MAX_CONFIG_BYTES + 1), target, dequantized)
                if text is not None:
                    writer.write_text(dest, text, like=src)
                    continue
                f.seek(0)
            pending = writer.open(dest, like=src)
            while chunk := f.read(_COPY_CHUNK):  # a tokenizer.json of 100 MB is not held whole
                pending.write(chunk)
            pending.finish()
    return names


def _config_cast(raw: bytes, target: DType, dequantized: bool) -> str | None:
    """config.json naming ``target``, or None when it is not a JSON object (it is then copied as
    it is, and lint reports it)."""
    try:
        return config_with_dtype(raw.decode("utf-8"), target, dequantized)
    except (ValueError, UnicodeDecodeError, AttributeError, TypeError, RecursionError):
        return None
