"""Benchmark: list a 200k-tensor header, ours vs safetensors' safe_open + get_slice.

Target (issue 2): ≤ 0.3 s for 200k tensors; the reference path takes ~1.1 s here.
Prints each timing (best of N) and the ratio. Not a test: no assertion.

    .venv/bin/python bench/list_vs_safe_open.py [--tensors 200000]
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

DTYPES = ["F32", "F64", "BF16", "F16", "I64"]
SIZES = {"F32": 4, "F64": 8, "BF16": 2, "F16": 2, "I64": 8}


def make_file(path: str, n: int) -> None:
    """200k small tensors with realistic names (model.layers.N.mlp.up_proj.weight-like)."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    off = 0
    parts = [
        "self_attn.q_proj",
        "self_attn.k_proj",
        "self_attn.v_proj",
        "self_attn.o_proj",
        "mlp.gate_proj",
        "mlp.up_proj",
        "mlp.down_proj",
        "input_layernorm",
        "post_attention_layernorm",
    ]
    for i in range(n):
        dt = DTYPES[i % len(DTYPES)]
        shape = [2, 3] if i % 3 else [4]
        nbytes = SIZES[dt] * (6 if i % 3 else 4)
        name = f"model.layers.{i // (2 * len(parts))}.{parts[i % len(parts)]}.{'weight' if i % 2 else 'bias'}.{i}"
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + nbytes]}
        off += nbytes
    text = json.dumps(header, separators=(",", ":"))
    text += " " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text.encode())
        f.truncate(8 + len(text) + off)


def best(fn, repeat: int) -> float:
    """Best wall time until ``fn``'s rows exist; freeing them afterwards is not timed (a listing
    process exits instead), for either side."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        del result
    return min(times)


def ours(path: str) -> None:
    from inspector.core.opening import open_checkpoint

    ckpt = open_checkpoint(path)
    rows = [(t.name, t.dtype.name, t.shape, t.nbytes) for t in ckpt.tensors]
    assert len(rows) > 0
    return ckpt, rows


def reference(path: str) -> None:
    from safetensors import safe_open

    with safe_open(path, "numpy") as f:
        rows = []
        for k in f.keys():  # noqa: SIM118 - safe_open has no __iter__
            s = f.get_slice(k)
            rows.append((k, s.get_dtype(), s.get_shape()))
    assert len(rows) > 0
    return rows


def cli_time(path: str) -> float:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from cast_vs_torch import compile_like_an_install

    compile_like_an_install()
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "inspector", "list", path, "--json"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tensors", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "many.safetensors")
        make_file(path, args.tensors)
        with open(path, "rb") as f:
            header_mb = struct.unpack("<Q", f.read(8))[0] / 1e6
        ours(path)  # warm imports and page cache for both
        reference(path)
        t_ours = best(lambda: ours(path), args.repeat)
        t_ref = best(lambda: reference(path), args.repeat)
        from inspector.core.opening import open_checkpoint

        t_open = best(lambda: open_checkpoint(path), args.repeat)
        t_cli = min(cli_time(path) for _ in range(3))
    print(f"tensors: {args.tensors:,}  header: {header_mb:.1f} MB")
    print(f"ours (open_checkpoint + rows):     {t_ours:.3f} s   target <= 0.300 s")
    print(f"  of which open_checkpoint alone:  {t_open:.3f} s")
    print(f"safe_open + get_slice (reference): {t_ref:.3f} s")
    print(f"ratio ours / reference:            {t_ours / t_ref:.2f}x")
    print(f"CLI 'list --json' end to end (incl. interpreter start, JSON out): {t_cli:.3f} s")


if __name__ == "__main__":
    main()
