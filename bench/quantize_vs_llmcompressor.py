"""Benchmark: quantize a BF16 llama to FP8_DYNAMIC and W4A16, ours vs llm-compressor's data-free
run (``from_pretrained``, ``oneshot`` with the preset, ``save_pretrained(save_compressed=True)``),
and our ``--preview`` of all six presets (in worker processes, and on threads) against one
llm-compressor run.

Targets (measured, not asserted): ours ≤ 0.5× llm-compressor's wall time, peak RSS ≤ 256 MiB;
the six-scheme preview ≤ one llm-compressor run. Measured like ``cast_vs_torch.py`` (separate
processes, peak RSS of the process tree, ``sync`` and a pause between runs). Also checks that
both outputs hold the same tensors, byte for byte. Not a test: no assertion.

    .venv/bin/python bench/quantize_vs_llmcompressor.py [--gib 1.5] [--repeat 2] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

from cast_vs_torch import ROOT, measure

LLMC_SCRIPT = """
import sys
from transformers import AutoModelForCausalLM
from llmcompressor import oneshot
from llmcompressor.modifiers.quantization import QuantizationModifier
src, scheme, out = sys.argv[1:4]
model = AutoModelForCausalLM.from_pretrained(src, dtype="auto")
oneshot(model=model, recipe=QuantizationModifier(targets="Linear", scheme=scheme, ignore=["lm_head"]))
model.save_pretrained(out, save_compressed=True)
"""


def make_model(folder: str, gib: float) -> None:
    """A llama-shaped BF16 model folder (hidden 2048, MLP 5632, vocab 32000; layers for ``gib``),
    values drawn from N(0, 0.02), written tensor by tensor with our writer."""
    import numpy as np

    sys.path.insert(0, ROOT)
    from inspector.core.dtypes import DTYPES
    from inspector.core.save.writer import AtomicWriter, TensorEntry

    hidden, inter, vocab = 2048, 5632, 32000
    per_layer = 4 * hidden * hidden + 3 * hidden * inter
    layers = max(1, round((gib * (1 << 30) / 2 - 2 * vocab * hidden) / per_layer))
    shapes = [("model.embed_tokens.weight", (vocab, hidden)), ("lm_head.weight", (vocab, hidden)),
              ("model.norm.weight", (hidden,))]  # fmt: skip
    for i in range(layers):
        p = f"model.layers.{i}"
        shapes += [
            (f"{p}.input_layernorm.weight", (hidden,)),
            (f"{p}.post_attention_layernorm.weight", (hidden,)),
            *((f"{p}.self_attn.{m}.weight", (hidden, hidden)) for m in ("q_proj", "k_proj", "v_proj", "o_proj")),
            (f"{p}.mlp.gate_proj.weight", (inter, hidden)),
            (f"{p}.mlp.up_proj.weight", (inter, hidden)),
            (f"{p}.mlp.down_proj.weight", (hidden, inter)),
        ]  # fmt: skip
    shapes.sort()
    rng = np.random.default_rng(0)
    pool = ((rng.standard_normal(1 << 24).astype(np.float32) * 0.02).view(np.uint32) >> 16).astype(
        np.uint16
    )
    os.makedirs(folder, exist_ok=True)
    with AtomicWriter() as w:
        entries = [TensorEntry(n, DTYPES["BF16"], s) for n, s in shapes]
        f = w.open_safetensors(os.path.join(folder, "model.safetensors"), entries, {"format": "pt"})
        for _name, shape in shapes:
            n = int(np.prod(shape))
            if len(shape) == 1:
                f.write(np.full(n, 0x3F80, np.uint16))
                continue
            while n:
                m = min(n, pool.size)
                start = int(rng.integers(0, pool.size - m + 1))
                f.write(pool[start : start + m])
                n -= m
        w.commit()
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": hidden,
        "intermediate_size": inter, "num_hidden_layers": layers, "num_attention_heads": 16,
        "num_key_value_heads": 16, "vocab_size": vocab, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-6, "torch_dtype": "bfloat16", "tie_word_embeddings": False,
    }  # fmt: skip
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


def same_tensors(a: str, b: str) -> bool:
    sys.path.insert(0, ROOT)
    from tests.safetensors_bytes import tensor_bytes

    def all_of(folder: str) -> dict:
        out = {}
        for name in sorted(os.listdir(folder)):
            if name.endswith(".safetensors"):
                out.update(tensor_bytes(os.path.join(folder, name)))
        return out

    return all_of(a) == all_of(b)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gib", type=float, default=1.5)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="quantize-bench-", dir=args.dir)
    py = sys.executable
    try:
        src = os.path.join(tmp, "model")
        make_model(src, args.gib)
        size = os.path.getsize(os.path.join(src, "model.safetensors")) / (1 << 30)
        print(f"model: {size:.2f} GiB BF16, {os.cpu_count()} cores, best of {args.repeat}")
        cases: dict[str, list[str]] = {}
        for scheme in ("FP8_DYNAMIC", "W4A16"):
            cases[f"llm-compressor oneshot + save ({scheme})"] = [
                py,
                "-c",
                LLMC_SCRIPT,
                src,
                scheme,
            ]
            cases[f"ours: quantize --scheme {scheme}"] = [
                py, "-m", "inspector", "quantize", src, "--scheme", scheme, "-o",
            ]  # fmt: skip
        preview = [py, "-m", "inspector", "quantize", src, "--preview"]
        cases["ours: quantize --preview (all six)"] = preview
        # the same on threads in one process (what a library caller gets)
        cases["ours: --preview, threads"] = [
            "env",
            "CHECKPOINT_INSPECTOR_CAST_PROCESSES=0",
            *preview,
        ]
        results: dict[str, list[dict[str, float]]] = {k: [] for k in cases}
        kept: dict[str, str] = {}
        names = list(cases)
        for i in range(args.repeat):
            for name in names[i % len(names) :] + names[: i % len(names)]:
                cmd = list(cases[name])
                out = os.path.join(tmp, "out")
                if "--preview" not in cmd:
                    cmd.append(out)
                os.sync()
                time.sleep(3)
                results[name].append(measure(cmd))
                if os.path.isdir(out):
                    if name not in kept:
                        kept[name] = os.path.join(tmp, f"kept-{len(kept)}")
                        os.rename(out, kept[name])
                    else:
                        shutil.rmtree(out)
        for scheme in ("FP8_DYNAMIC", "W4A16"):
            a = kept[f"llm-compressor oneshot + save ({scheme})"]
            b = kept[f"ours: quantize --scheme {scheme}"]
            print(f"{scheme}: same tensors as llm-compressor, byte for byte: {same_tensors(a, b)}")
        print(f"{'case':48s} {'best s':>7s} {'× llmc':>7s} {'peak RSS MiB':>13s}")
        for name, runs in results.items():
            best = min(x["wall"] for x in runs)
            scheme = "W4A16" if "W4A16" in name else "FP8_DYNAMIC"
            base = min(x["wall"] for x in results[f"llm-compressor oneshot + save ({scheme})"])
            if "preview" in name:
                base = min(
                    min(x["wall"] for x in results[f"llm-compressor oneshot + save ({s})"])
                    for s in ("FP8_DYNAMIC", "W4A16")
                )
            rss = max(x["rss_mib"] for x in runs)
            print(f"{name:48s} {best:7.2f} {best / base:7.2f} {rss:13.0f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
