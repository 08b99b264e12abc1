"""transformers' / DeepSeek's ``quant_method: fp8``: F8_E4M3 weights with an F32
``weight_scale_inv`` per 128×128 block. The cast used to write the raw codes as values (max
|w| 448 instead of ~0.09); now it writes what transformers' ``Fp8Dequantize`` computes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from tests.quant_folders import deepseek_folder

torch = pytest.importorskip("torch")
F32, BF16, F8 = DTYPES["F32"], DTYPES["BF16"], DTYPES["F8_E4M3"]


def _reference(codes: np.ndarray, scale: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """DeepSeek's ``weight_dequant``: each block's F32 product with its scale, to ``dtype``."""
    q = torch.from_numpy(codes.view(np.uint8).copy()).view(torch.float8_e4m3fn).to(torch.float32)
    s = torch.from_numpy(scale)
    s = s.repeat_interleave(128, 0)[: q.shape[0]].repeat_interleave(128, 1)[:, : q.shape[1]]
    return (q * s).to(dtype)


def _cast(src: Path, out: Path, target: str = "BF16", on_progress=None) -> dict:
    from inspector.core.cast.job import cast_checkpoint

    with open_checkpoint(str(src)) as ckpt:
        job = cast_checkpoint(ckpt, DTYPES[target], str(out), chunk_bytes=8192)
        return run_job(job, on_progress).to_json()


def test_the_cast_writes_the_weights_not_the_codes(tmp_path):
    made = deepseek_folder(tmp_path / "fp8")
    report = _cast(tmp_path / "fp8", tmp_path / "plain")
    from safetensors.torch import load_file

    got = load_file(tmp_path / "plain" / "model.safetensors")
    w = got["model.layers.0.mlp.up_proj.weight"].float().numpy()
    assert np.abs(w).max() < 0.2  # the codes reach 448
    rel = np.linalg.norm(w - made["true"]) / np.linalg.norm(made["true"])
    assert rel < 0.05  # FP8's own loss, not 5,173× the weights
    assert set(got) == {"model.layers.0.mlp.up_proj.weight", "model.norm.weight", "lm_head.weight"}
    cast = {t["name"]: t for t in report["tensors"]}["model.layers.0.mlp.up_proj.weight"]
    assert cast["dequantized"] == "fp8" and cast["from"] == "F8_E4M3" and cast["to"] == "BF16"
    config = json.loads((tmp_path / "plain" / "config.json").read_text())
    assert "quantization_config" not in config and config["torch_dtype"] == "bfloat16"


@pytest.mark.parametrize("target", ["BF16", "F16", "F32"])
def test_values_equal_transformers_fp8_dequantize_bit_for_bit(tmp_path, target):
    from safetensors.torch import load_file
    from transformers.integrations.finegrained_fp8 import Fp8Dequantize

    made = deepseek_folder(tmp_path / "fp8", 384, 256, seed=3)
    _cast(tmp_path / "fp8", tmp_path / "plain", target)
    dtype = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}[target]
    got = load_file(tmp_path / "plain" / "model.safetensors")["model.layers.0.mlp.up_proj.weight"]
    q = torch.from_numpy(made["codes"].view(np.uint8).copy()).view(torch.float8_e4m3fn)
    want = Fp8Dequantize(None)._dequantize_one(q, torch.from_numpy(made["scale"]), dtype)
    assert got.dtype == dtype and torch.equal(got, want)


def test_the_report_measures_a_dequantized_weight_from_its_f32_values(tmp_path):
    """What the cast loses past dequantizing: the weight's F32 values (codes × scales) against
    the BF16 written, measured like any cast."""
    made = deepseek_folder(tmp_path / "fp8", 384, 256, seed=3)
    report = _cast(tmp_path / "fp8", tmp_path / "plain", "BF16")
    entry = {t["name"]: t for t in report["tensors"]}["model.layers.0.mlp.up_proj.weight"]
    f32 = _reference(made["codes"], made["scale"], torch.float32)
    err = (f32.to(torch.bfloat16).to(torch.float32) - f32).abs()
    assert entry["max_abs_err"] == err.max().item() > 0
    assert entry["lossless"] is False and entry["overflow"] == entry["nan"] == 0


def test_ragged_blocks_follow_deepseek_weight_dequant(tmp_path):
    """DeepSeek-V3's shapes are not all multiples of 128 (its kernel masks the last block)."""
    from safetensors.torch import load_file

    made = deepseek_folder(tmp_path / "fp8", 200, 300, seed=5)
    _cast(tmp_path / "fp8", tmp_path / "plain")
    got = load_file(tmp_path / "plain" / "model.safetensors")["model.layers.0.mlp.up_proj.weight"]
    assert torch.equal(got, _reference(made["codes"], made["scale"], torch.bfloat16))


def test_check_and_the_cli_cast_agree(tmp_path):
    deepseek_folder(tmp_path / "fp8")
    cli = [sys.executable, "-m", "inspector"]
    run = subprocess.run([*cli, "cast", str(tmp_path / "fp8"), "--target", "BF16", "-o",
                          str(tmp_path / "plain")], capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "dequantized" in run.stdout


def test_a_shard_holding_only_scales_is_not_written_and_the_output_opens(tmp_path):
    """A sharded fp8 model whose scales sit in their own shard: the cast wrote that shard
    empty, the index named none of it, and the output folder did not open."""
    from inspector.core.save.writer import save_arrays

    deepseek_folder(tmp_path / "one")
    with open_checkpoint(str(tmp_path / "one")) as ckpt:
        arrays = {t.name: (t.dtype, np.array(ckpt.view(t))) for t in ckpt.tensors}
    src = tmp_path / "sharded"
    src.mkdir()
    weight_map = {}
    for i, names in enumerate(([n for n in arrays if not n.endswith("_inv")],
                               [n for n in arrays if n.endswith("_inv")]), 1):  # fmt: skip
        shard = f"model-{i:05d}-of-00002.safetensors"
        save_arrays(src / shard, [(n, *arrays[n]) for n in names])
        weight_map |= dict.fromkeys(names, shard)
    (src / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    (src / "config.json").write_text((tmp_path / "one" / "config.json").read_text())
    seen: list = []
    _cast(src, tmp_path / "plain", on_progress=seen.append)
    # the scales of the shard not written are counted once, with their weights: the bar ends
    # exactly full (they were counted twice, and it ended past its total)
    done = [p.done for p in seen]
    assert done == sorted(done) and done[0] >= 0 and done[-1] == seen[-1].total > 0
    assert sorted(p.name for p in (tmp_path / "plain").iterdir()) == [
        "config.json", "model-00001-of-00002.safetensors", "model.safetensors.index.json"
    ]  # fmt: skip
    with open_checkpoint(str(tmp_path / "plain")) as out:
        assert sorted(t.name for t in out.tensors) == sorted(
            n for n in arrays if not n.endswith("_inv")
        )


def test_the_output_loads_as_the_model_transformers_dequantizes(tmp_path):
    """A tiny llama quantized to fp8 blocks: transformers loads it with
    ``FineGrainedFP8Config(dequantize=True)`` (on the CPU); our cast loads as a plain model with
    the same weights and the same forward pass."""
    from safetensors.torch import load_file, save_file
    from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM
    from transformers.utils.quantization_config import FineGrainedFP8Config

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=256, intermediate_size=384,
                      num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2)  # fmt: skip
    src = tmp_path / "fp8"
    LlamaForCausalLM(cfg).to(torch.bfloat16).save_pretrained(src)
    quantized = {}
    for name, v in load_file(src / "model.safetensors").items():
        if not name.endswith("proj.weight"):
            quantized[name] = v
            continue
        r, c = v.shape
        blocks = v.float().reshape(r // 128, 128, c // 128, 128)
        scale = blocks.abs().amax(dim=(1, 3)) / 448
        codes = (blocks / scale[:, None, :, None]).reshape(r, c).to(torch.float8_e4m3fn)
        quantized[name], quantized[name + "_scale_inv"] = codes, scale
    save_file(quantized, src / "model.safetensors", metadata={"format": "pt"})
    config = json.loads((src / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "fp8", "activation_scheme": "dynamic",
                                     "weight_block_size": [128, 128]}  # fmt: skip
    (src / "config.json").write_text(json.dumps(config))
    _cast(src, tmp_path / "plain")
    ref = AutoModelForCausalLM.from_pretrained(
        src, quantization_config=FineGrainedFP8Config(dequantize=True), dtype=torch.bfloat16
    )
    ours = AutoModelForCausalLM.from_pretrained(tmp_path / "plain")
    assert getattr(ours.config, "quantization_config", None) is None
    a, b = ref.state_dict(), ours.state_dict()
    assert set(a) == set(b)
    for name, t in b.items():
        assert t.dtype == torch.bfloat16 and torch.equal(a[name], t), name
    x = torch.tensor([[1, 5, 9, 3, 7]])
    assert torch.equal(ref(x).logits, ours(x).logits)
