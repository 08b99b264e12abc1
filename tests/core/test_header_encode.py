"""The header bytes we write, byte for byte as the reference writer lays them out."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from safetensors.numpy import save

from inspector.core.dtypes import DTYPES
from inspector.core.formats.safetensors.encode import TensorEntry, encode_header


def test_the_header_is_compact_utf8_space_padded_with_its_length_first():
    entries = [TensorEntry("é", DTYPES["F32"], (2,)), TensorEntry("b", DTYPES["U8"], (3,))]
    got = encode_header(entries, {"k": "v"})
    text = (
        '{"__metadata__":{"k":"v"},"é":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
        '"b":{"dtype":"U8","shape":[3],"data_offsets":[8,11]}}'
    ).encode()
    text += b" " * (-len(text) % 8)
    assert len(text) % 8 == 0 and text.endswith(b" ")
    assert got == struct.pack("<Q", len(text)) + text


def test_the_same_bytes_as_the_reference_writer():
    arrays = {"a": np.zeros((2, 3), np.float32), "z": np.zeros(5, np.uint8)}
    ref = save(arrays, metadata={"format": "pt"})
    n = struct.unpack("<Q", ref[:8])[0]
    entries = [
        TensorEntry(k, DTYPES["F32" if k == "a" else "U8"], v.shape) for k, v in arrays.items()
    ]
    assert encode_header(entries, {"format": "pt"}) == ref[: 8 + n]


def test_a_name_twice_is_refused():
    with pytest.raises(ValueError, match="tensor name 'a' appears twice"):
        encode_header([TensorEntry("a", DTYPES["F32"], ())] * 2, None)
