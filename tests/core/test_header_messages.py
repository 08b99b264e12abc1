"""The exact line a person reads for each kind of bad header: the tensor it names, the value it
shows. (Mutation testing: a message naming no tensor, or showing the wrong number, passed.)"""

from __future__ import annotations

import json
import struct

import pytest

from inspector.core.errors import CheckpointError
from inspector.core.header import parse_header_text, read_header


def _write(tmp_path, header: str, data_len: int):
    raw = header.encode()
    p = tmp_path / "x.safetensors"
    p.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * data_len)
    return p


@pytest.mark.parametrize(
    "header, data_len, reason",
    [
        (
            '{"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}',
            4,
            "tensor 'w': shape must be a list of non-negative integers, got [-1]",
        ),
        (
            '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0]}}',
            4,
            "tensor 'w': data_offsets must be exactly two non-negative integers, got [0]",
        ),
        (
            '{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}',
            4,
            "tensor 'w': shape [2] × F32 needs 8 bytes but data_offsets give 4",
        ),
        (
            '{"w": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}}',
            2,
            "tensor 'w': 3 × 4-bit F4 values do not fill whole bytes",
        ),
        (
            '{"w": {"dtype": "F32", "dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}',
            4,
            "tensor 'w': field 'dtype' appears twice",
        ),
        (
            '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "x": 1'
            + "0" * 400
            + "}}",
            4,
            "header holds a number too large for a 64-bit float: 1000000000000000000000000000000000000...",
        ),
    ],
)
def test_exact_reasons(tmp_path, header, data_len, reason):
    with pytest.raises(CheckpointError) as err:
        read_header(_write(tmp_path, header, data_len))
    assert err.value.reason == reason


def test_careful_parser_accepts_adjacent_tensors_and_refuses_overlap():
    """Tensors that touch (the next starts where the last ended) are fine; overlap is not."""
    ok = json.dumps(
        {
            "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
            "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]},
        }
    )
    header = parse_header_text("x", ok, data_start=8, file_size=16)
    assert [t.name for t in header.tensors] == ["a", "b"]
    bad = ok.replace("[4, 8]", "[2, 6]")
    with pytest.raises(CheckpointError):
        parse_header_text("x", bad, data_start=8, file_size=14)
