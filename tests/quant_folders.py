"""Quantized model folders built by hand with our safetensors writer, in the layouts and names
the real tools write (DeepSeek/transformers fp8, GPTQ, AWQ, bitsandbytes, gpt-oss): for the
schemes llm-compressor cannot make on CPU, and for hostile variants of them."""

from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np

from inspector.core.dtypes import DTYPES
from inspector.core.layout import TensorInfo
from inspector.core.save.writer import save_arrays

F32, BF16, F16, F8 = DTYPES["F32"], DTYPES["BF16"], DTYPES["F16"], DTYPES["F8_E4M3"]
I32, U8, I8 = DTYPES["I32"], DTYPES["U8"], DTYPES["I8"]


def ct_config(fmt: str, weights: dict, targets: tuple[str, ...] = ("Linear",), **extra) -> dict:
    """A compressed-tensors quantization_config of one group ``g`` (``extra``: more top-level
    fields, such as ``ignore`` or ``transform_config``)."""
    return {"quant_method": "compressed-tensors", "format": fmt, **extra,
            "config_groups": {"g": {"targets": list(targets), "weights": weights}}}  # fmt: skip


def header_entry(name: str, dtype: str, shape: tuple[int, ...] = (4, 4)) -> TensorInfo:
    """A tensor as a header lists it, with no data: recognising a scheme reads only these."""
    return TensorInfo(dtype, shape, (0, 0), name, "model.safetensors")


def header_codes(m: str, dtype: str) -> list[TensorInfo]:
    """Module ``m``'s codes as a [4, 16] ``weight`` of ``dtype`` with a per-row BF16 scale."""
    return [header_entry(f"{m}.weight", dtype, (4, 16)),
            header_entry(f"{m}.weight_scale", "BF16", (4, 1))]  # fmt: skip


def header_packed(m: str, dtype: str = "I32", codes: tuple[int, ...] = (4, 2),
                  scale: tuple[int, ...] = (4, 1)) -> list[TensorInfo]:  # fmt: skip
    """Module ``m``'s codes packed in a ``weight_packed`` of ``dtype`` (a [4, 2] one: a row of 16
    int4), with its BF16 ``weight_scale`` (per row) and its ``weight_shape``."""
    return [header_entry(f"{m}.weight_packed", dtype, codes),
            header_entry(f"{m}.weight_scale", "BF16", scale),
            header_entry(f"{m}.weight_shape", "I64", (len(codes),))]  # fmt: skip


def header_fp4(m: str, codes: tuple[int, ...] = (4, 8), scale: tuple[int, ...] = (4, 1),
               scale_dtype: str = "F8_E4M3") -> list[TensorInfo]:  # fmt: skip
    """Module ``m``'s NVFP4 codes as compressed-tensors stores them (a [4, 8] U8
    ``weight_packed``: a [4, 16] weight), a scale a group of 16, one F32 global scale."""
    return [header_entry(f"{m}.weight_packed", "U8", codes),
            header_entry(f"{m}.weight_scale", scale_dtype, scale),
            header_entry(f"{m}.weight_global_scale", "F32", (1,))]  # fmt: skip


def nvfp4_stacked() -> tuple[list, dict]:
    """NVFP4 codes stacked [2, 8, 32] (tensors, config for ``folder``): compressed-tensors'
    FP4 unpacking raises on them, so a cast refuses them."""
    weights = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}
    tensors = [
        ("m.weight_packed", U8, np.zeros((2, 8, 32), np.uint8)),
        ("m.weight_scale", F8, np.ones((2, 8, 4), ml_dtypes.float8_e4m3fn)),
        ("m.weight_global_scale", F32, np.ones(1, np.float32)),
    ]
    return tensors, ct_config("nvfp4-pack-quantized", weights)


def deepseek_folder(folder: Path, rows: int = 256, cols: int = 256, seed: int = 0) -> dict:
    """A DeepSeek-style folder: the true weights, their codes and scales as fp8 writes them."""
    rng = np.random.default_rng(seed)
    true = (rng.standard_normal((rows, cols)) * 0.02).astype(np.float32)
    br, bc = -(-rows // 128), -(-cols // 128)
    scale = np.empty((br, bc), np.float32)
    codes = np.empty((rows, cols), ml_dtypes.float8_e4m3fn)
    for i in range(br):
        for j in range(bc):
            block = true[i * 128 : (i + 1) * 128, j * 128 : (j + 1) * 128]
            scale[i, j] = np.abs(block).max() / 448.0
            codes[i * 128 : (i + 1) * 128, j * 128 : (j + 1) * 128] = (block / scale[i, j]).astype(
                ml_dtypes.float8_e4m3fn
            )
    folder.mkdir(parents=True, exist_ok=True)
    save_arrays(
        folder / "model.safetensors",
        [
            ("model.layers.0.mlp.up_proj.weight", F8, codes),
            ("model.layers.0.mlp.up_proj.weight_scale_inv", F32, scale),
            ("model.norm.weight", BF16, np.ones(cols, ml_dtypes.bfloat16)),
            ("lm_head.weight", BF16, true[:8].astype(ml_dtypes.bfloat16)),
        ],
    )
    config = {
        "architectures": ["DeepseekV3ForCausalLM"],
        "torch_dtype": "bfloat16",
        "quantization_config": {
            "quant_method": "fp8",
            "activation_scheme": "dynamic",
            "fmt": "e4m3",
            "weight_block_size": [128, 128],
        },
    }
    (folder / "config.json").write_text(json.dumps(config))
    return {"true": true, "codes": codes, "scale": scale}


def folder(path: Path, tensors: list, quantization_config: object | None) -> Path:
    """A model folder: ``tensors`` in model.safetensors, a config.json naming bfloat16 and
    ``quantization_config`` (left out when None)."""
    path.mkdir(parents=True, exist_ok=True)
    save_arrays(path / "model.safetensors", tensors)
    config: dict = {"architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16"}
    if quantization_config is not None:
        config["quantization_config"] = quantization_config
    (path / "config.json").write_text(json.dumps(config))
    return path


def gptq_tensors(m: str = "model.layers.0.mlp.up_proj", rows: int = 64, cols: int = 128) -> list:
    """AutoGPTQ's 4-bit layout: qweight [in/8, out], qzeros [groups, out/8], scales, g_idx."""
    rng = np.random.default_rng(0)
    groups = cols // 32
    return [
        (f"{m}.qweight", I32, rng.integers(-(2**31), 2**31, (cols // 8, rows), dtype=np.int32)),
        (f"{m}.qzeros", I32, rng.integers(-(2**31), 2**31, (groups, rows // 8), dtype=np.int32)),
        (f"{m}.scales", F16, rng.random((groups, rows)).astype(np.float16)),
        (f"{m}.g_idx", I32, (np.arange(cols) // 32).astype(np.int32)),
        ("model.norm.weight", BF16, np.ones(rows, ml_dtypes.bfloat16)),
    ]


def bnb4_tensors(m: str = "model.layers.0.mlp.up_proj") -> list:
    rng = np.random.default_rng(1)
    return [
        (f"{m}.weight", U8, rng.integers(0, 256, (4096, 1), dtype=np.uint8)),
        (f"{m}.weight.absmax", F32, rng.random(128).astype(np.float32)),
        (f"{m}.weight.quant_map", F32, np.linspace(-1, 1, 16, dtype=np.float32)),
        (f"{m}.weight.quant_state.bitsandbytes__nf4", U8, np.zeros(64, np.uint8)),
    ]


def gpt_oss_tensors(m: str = "model.layers.0.mlp.experts.gate_up_proj") -> list:
    rng = np.random.default_rng(2)
    return [
        (f"{m}_blocks", U8, rng.integers(0, 256, (2, 64, 4, 16), dtype=np.uint8)),
        (f"{m}_scales", U8, np.full((2, 64, 4), 127, np.uint8)),
    ]
