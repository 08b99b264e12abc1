"""Benchmark: a 1.5 GiB PyTorch `.bin` (torch zip), listed and converted to F32 safetensors,
ours vs the torch script a user writes, each in a fresh process, in the same run.

Targets (measured, not asserted): listing ≤ 0.05× `torch.load(weights_only=True)`; converting
≤ 0.5× the torch script (`torch.load` → `.to(float32)` → `save_file` + fsync) at ≤ 256 MiB peak
RSS. Medians of alternating runs; the file sits in the page cache for every run.

    .venv/bin/python bench/pickle_vs_torch.py [--gib 1.5] [--repeat 3] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from statistics import median

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cast_vs_torch import measure  # wall time, peak RSS of the process tree

TORCH_LIST = """
import sys, torch
sd = torch.load(sys.argv[1], weights_only=True)
for k, v in sd.items():
    print(k, v.dtype, tuple(v.shape))
"""

TORCH_CONVERT = """
import os, sys, torch
from safetensors.torch import save_file
sd = torch.load(sys.argv[1], weights_only=True)
sd = {k: (v.to(torch.float32) if v.is_floating_point() else v).contiguous() for k, v in sd.items()}
save_file(sd, sys.argv[2], metadata={"format": "pt"})
fd = os.open(sys.argv[2], os.O_RDONLY); os.fsync(fd); os.close(fd)
"""


def make_bin(path: str, gib: float) -> None:
    """A transformer-like state dict: BF16 and F64 matrices (one transposed), biases, a buffer."""
    import torch

    g = torch.Generator().manual_seed(0)
    n_layers = 12
    per_layer = gib * (1 << 30) / n_layers
    cols = 4096
    rows = int(per_layer / (cols * (8 + 2)))  # one F64 and one BF16 matrix per layer
    sd = {}
    for i in range(n_layers):
        sd[f"model.layers.{i}.mlp.weight"] = torch.randn(
            rows, cols, generator=g, dtype=torch.float64
        )
        sd[f"model.layers.{i}.attn.weight"] = torch.randn(cols, rows, generator=g).bfloat16().t()
        sd[f"model.layers.{i}.norm.weight"] = torch.ones(cols)
    sd["position_ids"] = torch.arange(cols).unsqueeze(0)
    torch.save(sd, path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=1.5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(dir=args.dir)
    py = sys.executable
    try:
        src = os.path.join(tmp, "pytorch_model.bin")
        make_bin(src, args.gib)
        print(f"file: {os.path.getsize(src) / (1 << 30):.2f} GiB torch zip, 37 tensors")
        out = os.path.join(tmp, "out.safetensors")
        cases = {
            "list: torch.load(weights_only=True)": [py, "-c", TORCH_LIST, src],
            "list: ours (python -m inspector list)": [py, "-m", "inspector", "list", src],
            "convert: torch script (load → .to(F32) → save_file + fsync)": [
                py, "-c", TORCH_CONVERT, src, out,
            ],
            "convert: ours (python -m inspector cast --target F32)": [
                py, "-m", "inspector", "cast", src, "--target", "F32", "-o", out,
            ],
        }  # fmt: skip
        runs: dict[str, list[dict[str, float]]] = {k: [] for k in cases}
        names = list(cases)
        for i in range(args.repeat):
            for name in names[i % 2 :] + names[: i % 2]:
                os.sync()
                time.sleep(3)
                runs[name].append(measure(cases[name]))
                if os.path.exists(out):
                    os.remove(out)
        rows = {
            k: (median([r["wall"] for r in v]), max(r["rss_mib"] for r in v))
            for k, v in runs.items()
        }
        for name, (wall, rss) in rows.items():
            print(f"{name:<64} {wall:7.2f} s  {rss:7.0f} MiB")
        t_list, o_list = rows[names[0]][0], rows[names[1]][0]
        t_conv, o_conv = rows[names[2]][0], rows[names[3]][0]
        print(f"list ratio    {o_list / t_list:.3f}×  (target ≤ 0.05×)")
        print(f"convert ratio {o_conv / t_conv:.2f}×  (target ≤ 0.5×, ≤ 256 MiB)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
