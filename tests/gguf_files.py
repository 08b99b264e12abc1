"""GGUF files for tests: written by the ggml project's own Python writer (the ``gguf``
package's ``GGUFWriter``), quantized by its ``quants.quantize``; and raw headers built byte by
byte from the spec for the hostile cases, one rule broken at a time."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import TYPE_CHECKING

import gguf
import numpy as np
from gguf.quants import quantize

if TYPE_CHECKING:
    import torch

Q = gguf.GGMLQuantizationType


def write_gguf(path: Path, tensors: dict[str, tuple[np.ndarray, Q | None]], arch: str = "llama",
               kv: dict | None = None, tokens: int = 0) -> Path:  # fmt: skip
    """``tensors``: name -> (array, None for a plain dtype or the block type to quantize to)."""
    w = gguf.GGUFWriter(str(path), arch)
    w.add_block_count(1)
    w.add_context_length(128)
    for k, v in (kv or {}).items():
        if isinstance(v, int):
            w.add_uint32(k, v)
        else:
            w.add_string(k, v)
    if tokens:
        w.add_token_list([f"t{i}".encode() for i in range(tokens)])
        w.add_token_scores([0.0] * tokens)
    for name, (array, qtype) in tensors.items():
        if qtype is None:
            w.add_tensor(name, array)
        else:
            w.add_tensor(name, quantize(array, qtype), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def permute(w: torch.Tensor, n_head: int, n_head_kv: int | None) -> torch.Tensor:
    """convert_hf_to_gguf.py's LlamaModel.permute, re-implemented in torch: the reference the
    Q/K row order is checked against."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (
        w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


def _s(text: bytes) -> bytes:
    return struct.pack("<Q", len(text)) + text


def raw_gguf(
    kvs: list[bytes] = (),
    infos: list[bytes] = (),
    data: bytes = b"",
    *,
    version: int = 3,
    n_tensors: int | None = None,
    n_kv: int | None = None,
    align: int = 32,
) -> bytes:
    """A GGUF file from its parts: ``kvs``/``infos`` already encoded (see ``kv``/``info``)."""
    head = b"GGUF" + struct.pack("<IQQ", version, len(infos) if n_tensors is None else n_tensors,
                                 len(kvs) if n_kv is None else n_kv)  # fmt: skip
    body = head + b"".join(kvs) + b"".join(infos)
    body += bytes(-len(body) % align)
    return body + data


def kv_u32(key: bytes, value: int) -> bytes:
    return _s(key) + struct.pack("<II", 4, value)


def kv_str(key: bytes, value: bytes) -> bytes:
    return _s(key) + struct.pack("<I", 8) + _s(value)


def info(name: bytes, dims: tuple[int, ...], type_id: int, offset: int) -> bytes:
    return (_s(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
            + struct.pack("<IQ", type_id, offset))  # fmt: skip
