"""An LLM-style checkpoint for tests and screenshots: 390 tensors named like a decoder's
(24 layers × 16), F64 rotary frequencies, int64 counters, BF16 embeddings and head."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays

PARTS = [
    "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
    "self_attn.o_proj.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
    "mlp.down_proj.weight", "input_layernorm.weight", "post_attention_layernorm.weight",
    "bn.running_mean", "bn.running_var", "bn.num_batches_tracked", "bn.weight", "bn.bias",
    "self_attn.rotary_emb.inv_freq", "mlp.act.alpha",
]  # fmt: skip


def write_llm_checkpoint(path: str | Path) -> list[str]:
    """Write it to ``path``; return the tensor names in file order."""
    rng = np.random.default_rng(0)
    arrays = []
    for i in range(24):
        for part in PARTS:
            dt = DTYPES["I64" if part.endswith("tracked") else "F64" if "freq" in part else "F32"]
            values = rng.standard_normal(64) * 0.02 if dt.is_float else np.arange(64)
            arrays.append((f"model.layers.{i}.{part}", dt, values.astype(dt.numpy)))
    bf16 = DTYPES["BF16"]
    for name in ("model.embed_tokens.weight", "lm_head.weight"):
        arrays.append((name, bf16, (rng.standard_normal(256) * 0.02).astype(bf16.numpy)))
    for name in ("model.norm.weight", "model.final_logit_softcap", "model.vision.patch.weight"):
        arrays.append((name, DTYPES["F32"], np.ones(8, np.float32)))
    arrays.append(("model.rotary_emb.inv_freq", DTYPES["F64"], np.ones(8)))
    save_arrays(path, arrays)
    return [a[0] for a in arrays]
