"""``quantize`` against llm-compressor itself: every tensor's bytes, dtype and shape, and the
``quantization_config``, equal to what its data-free run writes for the same model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.quantize.job import quantize_checkpoint
from inspector.core.quantize.schemes import SCHEMES
from tests.safetensors_bytes import tensor_bytes

from .conftest import MODELS

CASES = [(tag, s) for tag, (*_x, schemes) in MODELS.items() for s in schemes]


@pytest.mark.parametrize(("model", "scheme"), CASES)
def test_every_tensor_and_the_config_match_llmcompressor(
    llmc_reference: dict, tmp_path: Path, model: str, scheme: str
) -> None:
    ref = llmc_reference[model]
    out = tmp_path / "out"
    # small blocks: the weights are streamed in many pieces, and the bytes do not change
    run_job(quantize_checkpoint(open_checkpoint(str(ref["base"])), SCHEMES[scheme], str(out),
                                chunk_bytes=40_000))  # fmt: skip
    ours = tensor_bytes(out / "model.safetensors")
    theirs = tensor_bytes(ref[scheme] / "model.safetensors")
    assert sorted(ours) == sorted(theirs)
    different = [name for name in theirs if ours[name] != theirs[name]]
    assert different == []
    config = json.loads((out / "config.json").read_text())
    ref_config = json.loads((ref[scheme] / "config.json").read_text())
    assert config["quantization_config"] == ref_config["quantization_config"]


@pytest.mark.parametrize(
    "scheme", ["FP8_DYNAMIC", "FP8_BLOCK", "W8A16", "W4A16", "NVFP4A16", "MXFP4A16"]
)
def test_transformers_loads_the_output_and_its_logits_are_llmcompressors(
    llmc_reference: dict, tmp_path: Path, scheme: str
) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    ref = llmc_reference["bf16"]
    out = tmp_path / "out"
    run_job(quantize_checkpoint(open_checkpoint(str(ref["base"])), SCHEMES[scheme], str(out)))
    ids = torch.tensor([[1, 5, 9, 33, 2, 7, 100]])
    logits = []
    for folder in (out, ref[scheme]):  # decompressed on the CPU by compressed-tensors
        model = transformers.AutoModelForCausalLM.from_pretrained(folder)
        with torch.no_grad():
            logits.append(model(ids).logits)
    assert torch.isfinite(logits[0]).all()
    assert torch.equal(logits[0], logits[1])
