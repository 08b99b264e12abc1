"""Benchmark every streamed pass on a 1.5 GiB F32 checkpoint against the torch script a user
writes, each in a fresh process, in the same run: casts to F16/BF16/F8_E4M3 (with and without the
precision report), `list --stats` (F32 and a BF16 copy) and `diff` against the F16 cast.

Target (measured, not asserted): every row ≤ 0.5× the torch script at ≤ 256 MiB peak RSS.
Medians of alternating runs; `sync` and a pause between runs so none pays for another's writes.

    .venv/bin/python bench/passes_vs_torch.py [--gib 1.5] [--repeat 3] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from statistics import median

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cast_vs_torch import ROOT, measure  # wall time, peak RSS of the process tree

TORCH_CAST = """
import os, sys, torch
from safetensors.torch import load_file, save_file
dt = getattr(torch, sys.argv[3])
sd = load_file(sys.argv[1])
save_file({k: v.to(dt) if v.is_floating_point() else v for k, v in sd.items()}, sys.argv[2])
fd = os.open(sys.argv[2], os.O_RDONLY); os.fsync(fd); os.close(fd)
"""

TORCH_STATS = """
import sys, torch
from safetensors.torch import load_file
for k, v in load_file(sys.argv[1]).items():
    t = v.float()
    fin = t[torch.isfinite(t)]
    print(k, fin.min().item(), fin.max().item(), fin.mean().item(), fin.std().item(),
          torch.isnan(t).sum().item(), torch.isinf(t).sum().item())
"""

TORCH_DIFF = """
import sys, torch
from safetensors.torch import load_file
a, b = load_file(sys.argv[1]), load_file(sys.argv[2])
for k in a:
    x, y = a[k].double(), b[k].double()
    d = (x - y).abs()
    print(k, d.max().item(), (d / torch.maximum(x.abs(), y.abs())).nan_to_num(0).max().item())
"""

OURS_CAST_NO_REPORT = """
import sys
from inspector.core.cast.worker_policy import allow_worker_processes
allow_worker_processes()  # what the CLI does: this -c script is safe for spawned workers
from inspector.core.opening import open_checkpoint
from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.progress import run_job
with open_checkpoint(sys.argv[1]) as ckpt:
    run_job(cast_checkpoint(ckpt, DTYPES[sys.argv[3]], sys.argv[2], report=False))
"""


def make_f32(path: str, gib: float) -> None:
    import numpy as np

    sys.path.insert(0, ROOT)
    from inspector.core.dtypes import DTYPES
    from inspector.core.save.writer import AtomicWriter, TensorEntry

    n, cols = 12, 4096
    rows = int(gib * (1 << 30) / n / cols / 4)
    rng = np.random.default_rng(0)
    entries = [TensorEntry(f"layers.{i}.weight", DTYPES["F32"], (rows, cols)) for i in range(n)]
    with AtomicWriter() as w:
        f = w.open_safetensors(path, entries, {"format": "pt"})
        for _ in entries:
            f.write(rng.standard_normal(rows * cols, dtype=np.float32) * 0.05)
        w.commit()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=1.5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--only", default="", help="run the rows whose name contains this")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(dir=args.dir)
    py = sys.executable
    cli = [py, "-m", "inspector"]
    try:
        f32 = os.path.join(tmp, "f32.safetensors")
        make_f32(f32, args.gib)
        f16, bf16 = os.path.join(tmp, "f16.safetensors"), os.path.join(tmp, "bf16.safetensors")
        for out, t in ((f16, "F16"), (bf16, "BF16")):
            subprocess.run([*cli, "cast", f32, "--target", t, "-o", out], check=True, cwd=ROOT,
                           capture_output=True)  # fmt: skip
        out = os.path.join(tmp, "out.safetensors")
        rows = {
            "F32→F16 cast": (
                [py, "-c", TORCH_CAST, f32, out, "float16"],
                [py, "-c", OURS_CAST_NO_REPORT, f32, out, "F16"],
            ),
            "F32→F16 cast + report (CLI)": (
                [py, "-c", TORCH_CAST, f32, out, "float16"],
                [*cli, "cast", f32, "--target", "F16", "-o", out],
            ),
            "F32→BF16 cast + report (CLI)": (
                [py, "-c", TORCH_CAST, f32, out, "bfloat16"],
                [*cli, "cast", f32, "--target", "BF16", "-o", out],
            ),
            "F32→F8_E4M3 cast + report (CLI)": (
                [py, "-c", TORCH_CAST, f32, out, "float8_e4m3fn"],
                [*cli, "cast", f32, "--target", "F8_E4M3", "-o", out],
            ),
            "list --stats F32": ([py, "-c", TORCH_STATS, f32], [*cli, "list", "--stats", f32]),
            "list --stats BF16": ([py, "-c", TORCH_STATS, bf16], [*cli, "list", "--stats", bf16]),
            "diff F32 vs its F16 cast": (
                [py, "-c", TORCH_DIFF, f32, f16],
                [*cli, "diff", f32, f16, "--atol", "1"],  # exit 0: every value within 1
            ),
        }
        print(f"file: {os.path.getsize(f32) / (1 << 30):.2f} GiB F32, 12 tensors; "
              f"{args.repeat} alternating runs, medians")  # fmt: skip
        print(f"{'pass':<34} {'torch s':>8} {'MiB':>6} {'ours s':>8} {'MiB':>6} {'ratio':>6}")
        for name, (torch_cmd, ours_cmd) in rows.items():
            if args.only not in name:
                continue
            runs: dict[str, list[dict[str, float]]] = {"torch": [], "ours": []}
            for i in range(args.repeat):
                order = [("torch", torch_cmd), ("ours", ours_cmd)]
                for who, cmd in order if i % 2 == 0 else order[::-1]:
                    os.sync()
                    time.sleep(2)
                    runs[who].append(measure(cmd))
                    if os.path.exists(out):
                        os.remove(out)
            t, o = (median([r["wall"] for r in runs[k]]) for k in ("torch", "ours"))
            tm, om = (max(r["rss_mib"] for r in runs[k]) for k in ("torch", "ours"))
            print(f"{name:<34} {t:8.2f} {tm:6.0f} {o:8.2f} {om:6.0f} {o / t:6.2f}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
