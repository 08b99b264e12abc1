"""Plain (unquantized) llama-shaped model folders written with our own safetensors writer:
fixtures for quantize tests that need no torch."""

from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np

from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays

LINEARS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def llama_tensors(
    hidden: int = 256,
    inter: int = 384,
    layers: int = 1,
    dtype: str = "BF16",
    seed: int = 0,
    outliers: int | None = None,
    non_finite: bool = False,
) -> list[tuple[str, object, np.ndarray]]:
    """``outliers``: the layer whose down_proj gets a few inputs 100× the others (as real LLMs'
    activations make their weights): the weight a per-group scheme handles, a per-channel one
    does not. ``non_finite``: an inf in k_proj, a -inf in o_proj, a NaN in down_proj."""
    rng = np.random.default_rng(seed)
    d = DTYPES[dtype]
    np_type = {"BF16": ml_dtypes.bfloat16, "F16": np.float16, "F32": np.float32}[dtype]

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np_type)

    shapes = {"q_proj": (hidden, hidden), "k_proj": (hidden // 2, hidden),
              "v_proj": (hidden // 2, hidden), "o_proj": (hidden, hidden),
              "gate_proj": (inter, hidden), "up_proj": (inter, hidden),
              "down_proj": (hidden, inter)}  # fmt: skip
    out: list[tuple[str, object, np.ndarray]] = [("model.embed_tokens.weight", d, w(64, hidden))]
    for i in range(layers):
        p = f"model.layers.{i}"
        for leaf in LINEARS:
            part = "self_attn" if leaf in ("q_proj", "k_proj", "v_proj", "o_proj") else "mlp"
            values = w(*shapes[leaf])
            if i == outliers and leaf == "down_proj":
                values[:, :: inter // 3] *= 100
            bad = {"k_proj": np.inf, "o_proj": -np.inf, "down_proj": np.nan}.get(leaf)
            if non_finite and bad is not None:
                values[8, 9] = bad
            out.append((f"{p}.{part}.{leaf}.weight", d, values))
        out.append((f"{p}.input_layernorm.weight", d, np.ones(hidden, np_type)))
    out.append(("model.norm.weight", d, np.ones(hidden, np_type)))
    out.append(("lm_head.weight", d, w(64, hidden)))
    return out


def llama_folder(folder: Path, shards: int = 1, **kw: object) -> Path:
    """A model folder: config.json (bfloat16), tokenizer.json, the weights (``shards`` files
    with an index when more than one)."""
    tensors = llama_tensors(**kw)  # type: ignore[arg-type]
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "torch_dtype": "bfloat16",
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    (folder / "tokenizer.json").write_text('{"model": {"vocab": {}}}')
    if shards == 1:
        save_arrays(folder / "model.safetensors", tensors)
        return folder
    per = -(-len(tensors) // shards)
    weight_map = {}
    for k in range(shards):
        name = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        part = tensors[k * per : (k + 1) * per]
        save_arrays(folder / name, part)
        weight_map.update({n: name for n, _d, _a in part})
    index = {"metadata": {"total_size": 0}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    return folder
