"""Burnpack files for tests, written from the format's description (burn-pack's lib.rs), not by
the code under test: a header, cbor2's encoding of the metadata burn's writer produces, zero
padding to 256, each tensor on a 256-byte boundary in the given (module) order.

Knobs break one rule at a time for the hostile cases.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import cbor2
import numpy as np


@dataclass
class BurnTensor:
    name: str
    dtype: object  # burn's serde value: "F32", {"Bool": "Native"}, ...
    shape: list[int]
    data: bytes
    param_id: int | None = None


def plain(name: str, array: np.ndarray, param_id: int | None = None) -> BurnTensor:
    names = {"float32": "F32", "float64": "F64", "float16": "F16", "int64": "I64",
             "int32": "I32", "int8": "I8", "uint8": "U8", "bfloat16": "BF16"}  # fmt: skip
    return BurnTensor(name, names[str(array.dtype)], list(array.shape), array.tobytes(), param_id)


def burnpack_bytes(
    tensors: list[BurnTensor],
    metadata: dict[str, str] | None = None,
    *,
    version: int = 1,
    magic: bytes = b"NRUB",
    doc: object = None,  # the whole CBOR value instead of the one built here
    raw_metadata: bytes | None = None,  # the CBOR bytes as they are
    meta_size: int | None = None,  # the header's metadata size field as given
    offsets: dict[str, tuple[int, int]] | None = None,  # descriptor offsets as given
    trailing: bytes = b"",
) -> bytes:
    descriptors, data, pos = {}, bytearray(), 0
    for t in tensors:
        start = -(-pos // 256) * 256
        data += bytes(start - pos) + t.data
        pos = start + len(t.data)
        d = {"dtype": t.dtype, "shape": t.shape, "data_offsets": [start, pos]}
        if offsets and t.name in offsets:
            d["data_offsets"] = list(offsets[t.name])
        if t.param_id is not None:
            d["param_id"] = t.param_id
        descriptors[t.name] = d
    if doc is None:
        doc = {"tensors": dict(sorted(descriptors.items()))}
        if metadata:
            doc["metadata"] = dict(sorted(metadata.items()))
    body = raw_metadata if raw_metadata is not None else cbor2.dumps(doc)
    size = len(body) if meta_size is None else meta_size
    head = magic + struct.pack("<HI", version, size) + body
    head += bytes(-len(head) % 256)
    return head + bytes(data) + trailing


def write_burnpack(path: Path, tensors: list[BurnTensor], metadata=None, **knobs) -> Path:
    path.write_bytes(burnpack_bytes(tensors, metadata, **knobs))
    return path
