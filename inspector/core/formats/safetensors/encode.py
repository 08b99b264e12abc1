"""Encode a safetensors header exactly as the reference writer lays it out."""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping, Sequence

from ...layout import TensorEntry


def encode_header(entries: Sequence[TensorEntry], metadata: Mapping[str, str] | None) -> bytes:
    """The 8-byte length and JSON header, space-padded to a multiple of 8 as the reference writer.

    Tensors keep the given order and their data is laid out in that order, contiguously from 0.
    """
    header: dict[str, object] = {}
    if metadata is not None:
        header["__metadata__"] = dict(metadata)
    offset = 0
    for e in entries:
        if e.name in header:
            raise ValueError(f"tensor name {e.name!r} appears twice")
        end = offset + e.nbytes
        header[e.name] = {
            "dtype": e.dtype.name,
            "shape": list(e.shape),
            "data_offsets": [offset, end],
        }
        offset = end
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text
