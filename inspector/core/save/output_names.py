"""What a converted pickle is called: the names Hugging Face's converter gives.

``pytorch_model-00001-of-00002.bin`` → ``model-00001-of-00002.safetensors``;
``pytorch_model.bin.index.json`` → ``model.safetensors.index.json`` (variants keep their tag).
Only transformers renames: diffusers keeps its stem (``diffusion_pytorch_model.safetensors`` is
what it looks for).
"""

from __future__ import annotations

import os

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt")
PICKLE_METADATA = {"format": "pt"}  # what transformers expects of a converted checkpoint
_TORCH_STEM = "pytorch_model"


def safetensors_name(rel: str) -> str:
    """A pickle shard's path (relative, may have folders) as the converted file's path."""
    folder, base = os.path.split(rel)
    stem, _ext = os.path.splitext(base)
    return os.path.join(folder, _transformers_stem(stem) + ".safetensors")


def safetensors_index_name(name: str) -> str:
    """``pytorch_model.bin.index[.variant].json`` → ``model.safetensors.index[.variant].json``."""
    return _transformers_stem(name.replace(".bin.index", ".safetensors.index"))


def _transformers_stem(name: str) -> str:
    if name.startswith(_TORCH_STEM):
        return "model" + name[len(_TORCH_STEM) :]
    return name
