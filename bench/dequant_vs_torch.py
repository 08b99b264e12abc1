"""Benchmark: dequantize a DeepSeek-style FP8 block-scaled checkpoint to BF16, ours vs the torch
script a user writes (load, multiply each weight by its block scales in F32, ``.to(bfloat16)``,
save, fsync).

Targets (measured, not asserted): ours ≤ 0.5× the torch script's wall time, peak RSS ≤ 256 MiB.
Measured like ``cast_vs_torch.py`` (its wrapper: separate processes, peak RSS of the process
tree, ``sync`` and a pause between runs, our package byte-compiled as an install would be).
Also checks that both outputs hold the same bytes. Not a test: no assertion.

    .venv/bin/python bench/dequant_vs_torch.py [--gib 1.5] [--repeat 2] [--dir /tmp]
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

TORCH_SCRIPT = """
import os, sys, torch
from safetensors.torch import load_file, save_file
sd = load_file(sys.argv[1] + "/model.safetensors")
out = {}
for k, v in sd.items():
    if k.endswith("_scale_inv"):
        continue
    s = sd.get(k + "_scale_inv")
    if s is not None:
        rows, cols = v.shape
        full = s.repeat_interleave(128, 0)[:rows].repeat_interleave(128, 1)[:, :cols]
        v = (v.to(torch.float32) * full).to(torch.bfloat16)
    out[k] = v
save_file(out, sys.argv[2], metadata={"format": "pt"})
fd = os.open(sys.argv[2], os.O_RDONLY)
os.fsync(fd)
os.close(fd)
"""


def make_checkpoint(folder: str, gib: float) -> None:
    """FP8 E4M3 weights [4096, 8192] with F32 scale_inv per 128×128 block, plus BF16 norms."""
    import numpy as np

    sys.path.insert(0, ROOT)
    from inspector.core.dtypes import DTYPES
    from inspector.core.save.writer import AtomicWriter, TensorEntry

    rows, cols = 4096, 8192
    n = max(1, int(gib * (1 << 30) / (rows * cols)))
    rng = np.random.default_rng(0)
    entries, makers = [], []
    for i in range(n):
        w = f"model.layers.{i}.mlp.up_proj.weight"
        entries.append(TensorEntry(w, DTYPES["F8_E4M3"], (rows, cols)))
        # finite codes only (0x7F/0xFF are NaN): the torch script and ours agree on NaN anyway
        makers.append(lambda: (rng.integers(0, 0x7F, rows * cols, dtype=np.uint8)
                               | (rng.integers(0, 2, rows * cols, dtype=np.uint8) << 7)))  # fmt: skip
        entries.append(TensorEntry(w + "_scale_inv", DTYPES["F32"], (rows // 128, cols // 128)))
        makers.append(lambda: (rng.random((rows // 128) * (cols // 128)) * 1e-3).astype(np.float32))
        entries.append(
            TensorEntry(f"model.layers.{i}.input_layernorm.weight", DTYPES["BF16"], (cols,))
        )
        makers.append(lambda: np.full(cols, 0x3F80, np.uint16))
    os.makedirs(folder, exist_ok=True)
    with AtomicWriter() as wr:
        f = wr.open_safetensors(
            os.path.join(folder, "model.safetensors"), entries, {"format": "pt"}
        )
        for make in makers:
            f.write(make())
        wr.commit()
    config = {
        "torch_dtype": "bfloat16",
        "quantization_config": {
            "quant_method": "fp8",
            "activation_scheme": "dynamic",
            "weight_block_size": [128, 128],
        },
    }
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f)


def same_output(a: str, b: str) -> bool:
    import torch
    from safetensors import safe_open

    with safe_open(a, "pt") as fa, safe_open(b, "pt") as fb:
        if sorted(fa.keys()) != sorted(fb.keys()):
            return False
        return all(torch.equal(fa.get_tensor(k), fb.get_tensor(k)) for k in fa.keys())  # noqa: SIM118 - safe_open is no dict


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gib", type=float, default=1.5, help="size of the FP8 codes")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dequant-bench-", dir=args.dir)
    py = sys.executable
    try:
        src = os.path.join(tmp, "fp8")
        make_checkpoint(src, args.gib)
        size = os.path.getsize(os.path.join(src, "model.safetensors")) / (1 << 30)
        print(f"checkpoint: {size:.2f} GiB FP8 block-scaled → BF16, {os.cpu_count()} cores, "
              f"best of {args.repeat}")  # fmt: skip
        cases = {
            "torch script (load, × scales in F32, .to(bf16), save, fsync)": (
                [py, "-c", TORCH_SCRIPT, src], "torch.safetensors"),
            "ours: python -m inspector cast --target BF16": (
                [py, "-m", "inspector", "cast", src, "--target", "BF16", "-o"], "ours"),
        }  # fmt: skip
        results: dict[str, list[dict[str, float]]] = {k: [] for k in cases}
        outputs = {}
        for i in range(args.repeat):
            for name in list(cases)[i % 2 :] + list(cases)[: i % 2]:
                cmd, out_name = cases[name]
                out = os.path.join(tmp, out_name)
                os.sync()
                time.sleep(6)
                results[name].append(measure([*cmd, out]))
                keep = os.path.join(tmp, "kept-" + out_name)
                if i == 0:
                    os.rename(out, keep)
                    outputs[name] = keep
                else:
                    shutil.rmtree(out) if os.path.isdir(out) else os.remove(out)
        torch_name, ours_name = cases
        ours = os.path.join(outputs[ours_name], "model.safetensors")
        print("same bytes as the torch script:", same_output(outputs[torch_name], ours))
        base = min(x["wall"] for x in results[torch_name])
        print(f"{'case':62s} {'best s':>7s} {'× torch':>8s} {'peak RSS MiB':>13s}")
        for name, runs in results.items():
            best = min(x["wall"] for x in runs)
            rss = max(x["rss_mib"] for x in runs)
            print(f"{name:62s} {best:7.2f} {best / base:8.2f} {rss:13.0f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
