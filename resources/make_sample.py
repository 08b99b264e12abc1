"""Regenerate resources/sample.safetensors: a tiny BERT-like model with the usual dtype trap.

Most weights are F32, but layer 1's attention was produced with numpy math (F64, numpy's default),
the classifier head was stored in BF16 to save space, and position_ids is an int64 buffer, exactly
the mix that loads silently in PyTorch and panics in burn. Deterministic: same bytes every run.

    python resources/make_sample.py
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
from safetensors.numpy import save_file

HIDDEN, INTER, VOCAB, POSITIONS, LAYERS, LABELS = 64, 256, 1000, 128, 2, 3


def build() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20261202)

    def w(*shape: int, dtype: object = np.float32) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(dtype)

    t: dict[str, np.ndarray] = {
        "embeddings.word_embeddings.weight": w(VOCAB, HIDDEN),
        "embeddings.position_embeddings.weight": w(POSITIONS, HIDDEN),
        "embeddings.position_ids": np.arange(POSITIONS, dtype=np.int64)[None, :],
        "embeddings.LayerNorm.weight": np.ones(HIDDEN, np.float32),
        "embeddings.LayerNorm.bias": np.zeros(HIDDEN, np.float32),
    }
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        # layer 1's attention came out of numpy: float64, numpy's default
        attn_dtype = np.float64 if i == 1 else np.float32
        for part in ("query", "key", "value"):
            t[p + f"attention.self.{part}.weight"] = w(HIDDEN, HIDDEN, dtype=attn_dtype)
            t[p + f"attention.self.{part}.bias"] = np.zeros(HIDDEN, np.float32)
        t[p + "attention.output.dense.weight"] = w(HIDDEN, HIDDEN, dtype=attn_dtype)
        t[p + "attention.output.dense.bias"] = np.zeros(HIDDEN, np.float32)
        t[p + "attention.output.LayerNorm.weight"] = np.ones(HIDDEN, np.float32)
        t[p + "attention.output.LayerNorm.bias"] = np.zeros(HIDDEN, np.float32)
        t[p + "intermediate.dense.weight"] = w(INTER, HIDDEN)
        t[p + "intermediate.dense.bias"] = np.zeros(INTER, np.float32)
        t[p + "output.dense.weight"] = w(HIDDEN, INTER)
        t[p + "output.dense.bias"] = np.zeros(HIDDEN, np.float32)
        t[p + "output.LayerNorm.weight"] = np.ones(HIDDEN, np.float32)
        t[p + "output.LayerNorm.bias"] = np.zeros(HIDDEN, np.float32)
    # rotary frequencies span 8 decades: a cast to F16 flushes the smallest to subnormals
    t["encoder.rotary.inv_freq"] = 1.0 / (10000.0 ** (np.arange(0, HIDDEN, 2) / HIDDEN))
    # an additive attention mask bias: -1e9 overflows F16 (becomes -inf)
    t["encoder.attention_mask_bias"] = np.where(np.tri(16, dtype=bool), 0.0, -1e9).astype(
        np.float32
    )
    t["classifier.weight"] = w(LABELS, HIDDEN, dtype=ml_dtypes.bfloat16)
    t["classifier.bias"] = np.zeros(LABELS, ml_dtypes.bfloat16)
    return t


def main() -> None:
    out = Path(__file__).resolve().parent / "sample.safetensors"
    save_file(build(), str(out), metadata={"format": "pt", "note": "checkpoint-inspector sample"})
    print(f"wrote {out} ({out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
