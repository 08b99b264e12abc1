"""A safetensors file's tensors as (dtype, shape, raw bytes), read by hand: what byte-for-byte
comparisons with another tool's output need (no library's view of the values in between)."""

from __future__ import annotations

import json
import struct
from pathlib import Path


def tensor_bytes(path: Path) -> dict[str, tuple[str, list[int], bytes]]:
    data = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    header.pop("__metadata__", None)
    base = 8 + n
    return {
        name: (
            v["dtype"],
            v["shape"],
            data[base + v["data_offsets"][0] : base + v["data_offsets"][1]],
        )
        for name, v in header.items()
    }
