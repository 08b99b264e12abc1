"""What a converted pickle is called: the names Hugging Face's converter gives.

``pytorch_model-00001-of-00002.bin`` → ``model-00001-of-00002.safetensors``;
``pytorch_model.bin.index.json`` → ``model.safetensors.index.json`` (variants keep their tag).
"""

from __future__ import annotations

import os

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt")
PICKLE_METADATA = {"format": "pt"}  # what transformers expects of a converted checkpoint


def safetensors_name(rel: str) -> str:
    """A pickle shard's path (relative, may have folders) as the converted file's path."""
    folder, base = os.path.split(rel)
    stem, _ext = os.path.splitext(base)
    return os.path.join(folder, stem.replace("pytorch_model", "model") + ".safetensors")


def safetensors_index_name(name: str) -> str:
    """``pytorch_model.bin.index[.variant].json`` → ``model.safetensors.index[.variant].json``."""
    return name.replace(".bin.index", ".safetensors.index").replace("pytorch_model", "model")
