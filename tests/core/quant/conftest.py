"""Quantized checkpoints made by llm-compressor itself (its data-free presets, on CPU, on a tiny
llama), once per test session: the fixtures are the real tool's output, not our idea of it."""

from __future__ import annotations

from pathlib import Path

import pytest


def ct_folder(path: Path, fmt: str, weights: dict, tensors: dict) -> Path:
    """A model folder of module ``m``'s ``tensors`` (torch tensors, saved by safetensors' own
    writer) under a one-group compressed-tensors config of ``fmt`` and ``weights``."""
    import json

    from safetensors.torch import save_file

    from tests.quant_folders import ct_config

    path.mkdir()
    save_file({f"m.{k}": v for k, v in tensors.items()}, path / "model.safetensors")
    config = {"architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16"}
    config["quantization_config"] = ct_config(fmt, weights)
    (path / "config.json").write_text(json.dumps(config))
    return path


def ct_decompressed(folder: Path, module: str):
    """compressed-tensors' decompressor for ``module`` (its first group's scheme), on the
    tensors as saved: the reference our dequantization is tested against (a torch tensor)."""
    import json

    from compressed_tensors.compressors.base import BaseCompressor
    from compressed_tensors.quantization import QuantizationScheme
    from safetensors.torch import load_file

    qc = json.loads((folder / "config.json").read_text())["quantization_config"]
    group = next(iter(qc["config_groups"].values()))
    scheme = QuantizationScheme(**{k: v for k, v in group.items() if k != "format"})
    compressor = BaseCompressor.get_value_from_registry(group.get("format") or qc["format"])
    state = load_file(folder / "model.safetensors")
    local = {k[len(module) + 1 :]: v for k, v in state.items() if k.startswith(module + ".")}
    return compressor.decompress(local, scheme)["weight"]


SCHEMES = (
    "FP8_DYNAMIC", "FP8_BLOCK", "W8A16", "W4A16", "W4A16_ASYM", "W8A8", "NVFP4A16", "MXFP4A16",
)  # fmt: skip


@pytest.fixture(scope="session")
def llmc_models(tmp_path_factory) -> dict[str, Path]:
    """{scheme: model folder}, plus "base": the unquantized BF16 model they came from."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    llmcompressor = pytest.importorskip("llmcompressor")
    from llmcompressor.modifiers.quantization import QuantizationModifier

    root = tmp_path_factory.mktemp("llmc")
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=64, hidden_size=128, intermediate_size=256, num_hidden_layers=1,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
    )  # fmt: skip
    base = root / "base"
    transformers.LlamaForCausalLM(config).to(torch.bfloat16).save_pretrained(base)
    out = {"base": base}
    for scheme in SCHEMES:
        model = transformers.LlamaForCausalLM.from_pretrained(base, dtype=torch.bfloat16)
        recipe = QuantizationModifier(targets="Linear", scheme=scheme, ignore=["lm_head"])
        llmcompressor.oneshot(model=model, recipe=recipe)
        model.save_pretrained(root / scheme, save_compressed=True)
        out[scheme] = root / scheme
    return out
