"""Benchmark: GGUF listing and dequantized statistics, ours against the gguf package's own
reader and dequantize loop, in the same run. Not a test: no assertion.

Targets (issue 32): ``list`` of a GGUF with 300 tensors and a 32k-entry tokenizer ≤ 0.3 s and
≤ 0.5× the ``GGUFReader`` open; dequantized stats of a 1 GiB Q4_K file ≤ 1.0× the package's
dequantize-everything loop, at ≤ 256 MiB peak. The Q4_K file holds random blocks with sane
scales (the package cannot quantize to Q4_K; dequantization cost does not depend on the values).

    .venv/bin/python bench/gguf_vs_reader.py [--q4k-mib 1024]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import gguf
import numpy as np
from child_peak import CLI, PEAK, peak_kib

Q = gguf.GGMLQuantizationType
_OPEN = (
    PEAK
    + """
import time
t = time.perf_counter()
if sys.argv[1] == "ours":
    from inspector.core.opening import open_checkpoint
    open_checkpoint(sys.argv[2]).close()
else:
    from gguf import GGUFReader
    GGUFReader(sys.argv[2])
sys.stderr.write(f"OPEN {time.perf_counter() - t}\\n")
"""
)
_LOOP = (
    PEAK
    + """
from gguf import GGUFReader
from gguf.quants import dequantize
r = GGUFReader(sys.argv[1])
for t in r.tensors:
    x = dequantize(t.data, t.tensor_type)
    x.min(), x.max(), x.mean(), x.std()
"""
)


def listing_file(path: str) -> None:
    rng = np.random.default_rng(0)
    w = gguf.GGUFWriter(path, "llama")
    w.add_block_count(30)
    w.add_token_list([f"token{i}".encode() for i in range(32_000)])
    w.add_token_scores(rng.standard_normal(32_000).astype(np.float32).tolist())
    w.add_token_types([1] * 32_000)
    for i in range(300):
        w.add_tensor(f"blk.{i // 10}.t{i}.weight", np.zeros((8, 32), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def q4k_file(path: str, mib: int) -> None:
    rng = np.random.default_rng(1)
    rows, blocks_per_row = 2048, 16  # 2048 × 4096 weights, 36 MiB... per tensor: 4.5 MiB
    per_tensor = rows * blocks_per_row * 144
    w = gguf.GGUFWriter(path, "llama")
    for i in range(max(1, (mib << 20) // per_tensor)):
        b = rng.integers(0, 256, (rows * blocks_per_row, 144), dtype=np.uint8)
        b[:, 0:2] = np.frombuffer(np.float16(0.01).tobytes(), np.uint8)  # d
        b[:, 2:4] = np.frombuffer(np.float16(0.002).tobytes(), np.uint8)  # dmin
        w.add_tensor(f"blk.{i}.ffn_up.weight", b.reshape(rows, blocks_per_row * 144),
                     raw_dtype=Q.Q4_K)  # fmt: skip
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def run(code: str, *argv: str) -> tuple[float, int, str]:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, check=False,
                       env=dict(os.environ, PYTHONPATH=os.getcwd()))  # fmt: skip
    dt = time.perf_counter() - t0
    err = p.stderr.decode()
    if p.returncode not in (0, 1):
        raise SystemExit(err)
    return dt, peak_kib(err), err


def best(code: str, *argv: str, repeat: int = 3) -> tuple[float, int, str]:
    runs = [run(code, *argv) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs), runs[0][2]


def opened(kind: str, path: str) -> float:
    return min(float(run(_OPEN, kind, path)[2].split("OPEN ")[1].split()[0]) for _ in range(5))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--q4k-mib", type=int, default=1024)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as d:
        small = os.path.join(d, "tokenizer.gguf")
        listing_file(small)
        ours_open, ref_open = opened("ours", small), opened("gguf", small)
        wall, peak, _ = best(CLI, "list", small)
        print(f"300 tensors + 32k tokenizer ({os.path.getsize(small) / 2**20:.1f} MiB):")
        print(f"  open: ours {ours_open * 1e3:.1f} ms, GGUFReader {ref_open * 1e3:.1f} ms "
              f"(×{ours_open / ref_open:.2f}); `list` command {wall:.2f} s wall, "
              f"{peak / 1024:.0f} MiB")  # fmt: skip
        big = os.path.join(d, "q4k.gguf")
        q4k_file(big, args.q4k_mib)
        size = os.path.getsize(big) / 2**20
        ours = best(CLI, "list", "--stats", big, repeat=2)
        ref = best(_LOOP, big, repeat=2)
        print(f"dequantized stats of {size:.0f} MiB Q4_K: ours {ours[0]:.1f} s, "
              f"{ours[1] / 1024:.0f} MiB | gguf loop {ref[0]:.1f} s, {ref[1] / 1024:.0f} MiB | "
              f"time ×{ours[0] / ref[0]:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
