"""Benchmark: Burnpack side by side with safetensors, same tensors, same run.

Targets (issue 31): listing a .bpk as fast as the same safetensors listing (±20%); a cast to
.bpk at the speed and peak memory of the same cast to .safetensors. The listing file has
100,000 tensors: burn refuses more in one file (its reader's MAX_TENSOR_COUNT), so a 200k-tensor
.bpk cannot exist. Each command runs in its own process (best of N wall times; peak RSS from
wait4). Not a test: no assertion.

    .venv/bin/python bench/burnpack_vs_safetensors.py [--tensors 100000] [--cast-mib 1024]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from child_peak import CLI, peak_kib

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.save.writer import AtomicWriter, TensorEntry

F32 = DTYPES["F32"]
PARTS = ["self_attn.q_proj", "self_attn.k_proj", "mlp.up_proj", "mlp.down_proj", "input_layernorm"]


def make_listing_file(path: str, n: int) -> None:
    entries = [
        TensorEntry(f"model.layers.{i // 10}.{PARTS[i % 5]}.{'weight' if i % 2 else 'bias'}.{i}",
                    F32, (2, 3) if i % 3 else (4,))
        for i in range(n)
    ]  # fmt: skip
    with AtomicWriter() as w:
        f = w.open_safetensors(path, entries, {"format": "pt"})
        for e in entries:
            f.write(np.zeros(e.nbytes, np.uint8))
        w.commit()


def make_cast_file(path: str, mib: int) -> None:
    n = max(1, mib // 4)  # 4 MiB F32 tensors, like a model's matrices
    entries = [TensorEntry(f"layers.{i}.weight", F32, (1024, 1024)) for i in range(n)]
    rng = np.random.default_rng(0)
    block = rng.standard_normal(1 << 20, dtype=np.float32)
    with AtomicWriter() as w:
        f = w.open_safetensors(path, entries, {"format": "pt"})
        for _ in entries:
            f.write(block)
        w.commit()


def to_burnpack(src: str, dst: str) -> None:
    with open_checkpoint(src) as ckpt:
        run_job(cast_checkpoint(ckpt, F32, dst, keep=["*"], report=False))


def run(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one CLI run in its own process."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", CLI, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=os.getcwd()),
        check=False,
    )
    elapsed = time.perf_counter() - t0
    err = proc.stderr.decode()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv}: {err}")
    return elapsed, peak_kib(err)


def best(argv: list[str], repeat: int, before=None) -> tuple[float, int]:
    results = []
    for _ in range(repeat):
        if before is not None:
            before()
        results.append(run(argv))
    return min(r[0] for r in results), max(r[1] for r in results)


def side_by_side(what: str, st: tuple[float, int], bpk: tuple[float, int]) -> None:
    print(
        f"{what:<28} safetensors {st[0]:6.2f} s {st[1] / 1024:6.0f} MiB | "
        f"burnpack {bpk[0]:6.2f} s {bpk[1] / 1024:6.0f} MiB | "
        f"time ×{bpk[0] / st[0]:.2f}, peak ×{bpk[1] / st[1]:.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tensors", type=int, default=100_000)
    ap.add_argument("--cast-mib", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as d:
        st, bpk = os.path.join(d, "many.safetensors"), os.path.join(d, "many.bpk")
        make_listing_file(st, args.tensors)
        to_burnpack(st, bpk)
        print(f"{args.tensors:,} tensors: safetensors {os.path.getsize(st) / 2**20:.1f} MiB, "
              f"burnpack {os.path.getsize(bpk) / 2**20:.1f} MiB")  # fmt: skip
        for cmd in (["list"], ["list", "--json"], ["check"]):
            side_by_side(" ".join(cmd), best([*cmd, st], args.repeat),
                         best([*cmd, bpk], args.repeat))  # fmt: skip
        src, src_bpk = os.path.join(d, "big.safetensors"), os.path.join(d, "big.bpk")
        make_cast_file(src, args.cast_mib)
        to_burnpack(src, src_bpk)
        outs = [os.path.join(d, n) for n in ("o.safetensors", "o.bpk")]

        def clean() -> None:
            for o in outs:
                if os.path.exists(o):
                    os.unlink(o)

        print(f"cast of {args.cast_mib} MiB F32 ({args.cast_mib // 4} tensors) to F16:")
        side_by_side("  safetensors source", best(["cast", src, "--target", "F16", "-o", outs[0]],
                     args.repeat, clean), best(["cast", src, "--target", "F16", "-o", outs[1]],
                     args.repeat, clean))  # fmt: skip
        side_by_side("  burnpack source", best(["cast", src_bpk, "--target", "F16", "-o", outs[0]],
                     args.repeat, clean), best(["cast", src_bpk, "--target", "F16", "-o", outs[1]],
                     args.repeat, clean))  # fmt: skip


if __name__ == "__main__":
    main()
