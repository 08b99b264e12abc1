"""A GGUF file against the HF model it came from: names mapped back, llama's Q/K rows put back
(checked against a torch re-implementation of llama.cpp's converter ``permute``), and a cast
that writes the HF names and row order."""

from __future__ import annotations

import numpy as np
import torch
from gguf.quants import dequantize, quantize
from safetensors.numpy import load_file, save_file

from inspector.core.cast.job import cast_checkpoint
from inspector.core.diff import diff_checkpoints
from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.quant.recognise import recognise
from inspector.core.status import DiffStatus
from tests.gguf_files import Q, permute, write_gguf

H, N_HEAD, N_KV, HEAD = 256, 4, 2, 64


def model(tmp_path):
    g = torch.Generator().manual_seed(0)
    hf = {
        "model.embed_tokens.weight": torch.randn(512, H, generator=g),
        "model.layers.0.self_attn.q_proj.weight": torch.randn(H, H, generator=g),
        "model.layers.0.self_attn.k_proj.weight": torch.randn(N_KV * HEAD, H, generator=g),
        "model.layers.0.mlp.down_proj.weight": torch.randn(H, 512, generator=g),
        "model.layers.0.input_layernorm.weight": torch.randn(H, generator=g),
        "model.norm.weight": torch.randn(H, generator=g),
        "lm_head.weight": torch.randn(512, H, generator=g),
    }
    save_file({k: v.numpy() for k, v in hf.items()}, str(tmp_path / "hf.safetensors"))
    q = permute(hf["model.layers.0.self_attn.q_proj.weight"], N_HEAD, N_HEAD).numpy()
    k = permute(hf["model.layers.0.self_attn.k_proj.weight"], N_HEAD, N_KV).numpy()
    path = write_gguf(
        tmp_path / "m.gguf",
        {
            "token_embd.weight": (hf["model.embed_tokens.weight"].numpy(), None),
            "blk.0.attn_q.weight": (np.ascontiguousarray(q), Q.Q8_0),
            "blk.0.attn_k.weight": (np.ascontiguousarray(k), None),
            "blk.0.ffn_down.weight": (hf["model.layers.0.mlp.down_proj.weight"].numpy(), Q.Q4_0),
            "blk.0.attn_norm.weight": (hf["model.layers.0.input_layernorm.weight"].numpy(), None),
            "output_norm.weight": (hf["model.norm.weight"].numpy(), None),
            "output.weight": (hf["lm_head.weight"].numpy(), Q.Q8_0),
            "rope_freqs.weight": (np.ones(32, np.float32), None),
        },
        kv={"llama.attention.head_count": N_HEAD, "llama.attention.head_count_kv": N_KV},
    )
    return hf, q, path


def test_diff_maps_names_and_puts_rows_back(tmp_path):
    hf, _q, path = model(tmp_path)
    with open_checkpoint(path) as a, open_checkpoint(tmp_path / "hf.safetensors") as b:
        diffs = {d.name: d for d in run_job(diff_checkpoints(a, b, quant_a=recognise(a.tensors)))}
    assert diffs["blk.0.attn_k.weight"].status is DiffStatus.EQUAL  # F32, rows put back
    assert diffs["blk.0.attn_k.weight"].name_b == "model.layers.0.self_attn.k_proj.weight"
    for name in ("token_embd.weight", "blk.0.attn_norm.weight", "output_norm.weight"):
        assert diffs[name].status is DiffStatus.EQUAL, name
    q = diffs["blk.0.attn_q.weight"]
    assert q.name_b == "model.layers.0.self_attn.q_proj.weight" and q.quant == "gguf"
    assert q.status is DiffStatus.DIFFER and q.rel_fro_err < 0.01  # Q8_0 noise, not a reorder
    assert diffs["rope_freqs.weight"].status is DiffStatus.ONLY_A


def test_cast_writes_hf_names_and_row_order(tmp_path):
    hf, q, path = model(tmp_path)
    with open_checkpoint(path) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F32"], str(tmp_path / "out.safetensors")))
    out = load_file(str(tmp_path / "out.safetensors"))
    np.testing.assert_array_equal(
        out["model.layers.0.self_attn.k_proj.weight"],
        hf["model.layers.0.self_attn.k_proj.weight"].numpy(),
    )
    # the reference: the GGUF rows dequantized by gguf, then un-permuted by the torch inverse
    deq = torch.from_numpy(dequantize(quantize(q, Q.Q8_0), Q.Q8_0))
    back = deq.reshape(N_HEAD, HEAD // 2, 2, H).swapaxes(1, 2).reshape(H, H)
    assert torch.equal(permute(back, N_HEAD, N_HEAD), deq)  # the inverse really inverts
    np.testing.assert_array_equal(out["model.layers.0.self_attn.q_proj.weight"], back.numpy())
    assert "lm_head.weight" in out and "model.norm.weight" in out
