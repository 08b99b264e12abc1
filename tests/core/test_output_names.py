"""The names a converted pickle gets: those Hugging Face's converter gives."""

from __future__ import annotations

import pytest

from inspector.core.save.output_names import safetensors_index_name, safetensors_name


@pytest.mark.parametrize(
    "name, converted",
    [
        ("pytorch_model.bin.index.json", "model.safetensors.index.json"),
        ("pytorch_model.bin.index.fp16.json", "model.safetensors.index.fp16.json"),
        ("model.safetensors.index.json", "model.safetensors.index.json"),
        # diffusers keeps its stem: it looks for diffusion_pytorch_model.safetensors
        (
            "diffusion_pytorch_model.bin.index.json",
            "diffusion_pytorch_model.safetensors.index.json",
        ),
    ],
)
def test_index_names(name, converted):
    assert safetensors_index_name(name) == converted


@pytest.mark.parametrize(
    "rel, converted",
    [
        ("pytorch_model-00001-of-00002.bin", "model-00001-of-00002.safetensors"),
        ("sub/pytorch_model.fp16.bin", "sub/model.fp16.safetensors"),
        ("weights.pt", "weights.safetensors"),
        ("unet/diffusion_pytorch_model.bin", "unet/diffusion_pytorch_model.safetensors"),
        ("my_pytorch_model.bin", "my_pytorch_model.safetensors"),
    ],
)
def test_shard_names(rel, converted):
    assert safetensors_name(rel) == converted
