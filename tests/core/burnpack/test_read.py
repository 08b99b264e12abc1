"""Reading Burnpack: burn's own file, every dtype burn writes, and what only Burnpack holds."""

from __future__ import annotations

import struct
from pathlib import Path

import cbor2
import ml_dtypes
import numpy as np
import pytest

from inspector.core.formats.burnpack import burnpack_facts, read_burnpack
from inspector.core.opening import open_checkpoint
from tests.burnpack_files import BurnTensor, burnpack_bytes, plain, write_burnpack

BURN_FILE = Path(__file__).parents[2] / "data" / "burn" / "mnist.bpk"


def test_burns_own_file_every_tensor_is_what_the_format_says():
    raw = BURN_FILE.read_bytes()
    (meta_size,) = struct.unpack("<I", raw[6:10])
    doc = cbor2.loads(raw[10 : 10 + meta_size])
    base = -(-(10 + meta_size) // 256) * 256
    with open_checkpoint(BURN_FILE) as ckpt:
        assert ckpt.files[0].format == "burnpack"
        assert len(ckpt.tensors) == 18
        # listed in the data's order (burn's module order), not the metadata's sorted order
        assert [t.name for t in ckpt.tensors[:3]] == [
            "conv1.conv.weight", "conv1.conv.bias", "conv1.norm.gamma",
        ]  # fmt: skip
        facts = burnpack_facts(ckpt.files[0])
        for name, d in doc["tensors"].items():
            s, e = d["data_offsets"]
            want = np.frombuffer(raw[base + s : base + e], "<f4").reshape(d["shape"])
            got = ckpt.view(name)
            assert got.dtype == np.float32 and got.shape == tuple(d["shape"])
            assert np.array_equal(got, want)
            assert facts.param_ids[name] == d["param_id"]
        assert ckpt.files[0].metadata is None  # burn wrote no metadata map in this file


def test_every_dtype_burn_writes(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    tensors = [
        plain("f64", a.astype(np.float64)),
        plain("f32", a),
        BurnTensor("flex", "Flex32", [2, 3], a.tobytes()),
        plain("f16", a.astype(np.float16)),
        plain("bf16", a.astype(ml_dtypes.bfloat16)),
        plain("i64", a.astype(np.int64)),
        BurnTensor("u16", "U16", [2, 3], a.astype(np.uint16).tobytes()),
        BurnTensor("mask", {"Bool": "Native"}, [2, 3], bytes([1, 0, 1, 0, 0, 1])),
        BurnTensor("mask8", {"Bool": "U8"}, [2], bytes([1, 0])),
        BurnTensor("mask32", {"Bool": "U32"}, [2], np.array([1, 0], "<u4").tobytes()),
        BurnTensor("old_bool", "Bool", [1], b"\x01"),
    ]
    path = write_burnpack(tmp_path / "m.bpk", tensors, {"format": "burnpack"})
    with open_checkpoint(path) as ckpt:
        dtypes = {t.name: t.dtype.name for t in ckpt.tensors}
        assert dtypes == {
            "f64": "F64", "f32": "F32", "flex": "F32", "f16": "F16", "bf16": "BF16",
            "i64": "I64", "u16": "U16", "mask": "BOOL", "mask8": "BOOL", "mask32": "U32",
            "old_bool": "BOOL",
        }  # fmt: skip
        for name in ("f64", "f32", "flex", "f16", "bf16", "i64", "u16"):
            assert np.array_equal(ckpt.view(name).astype(np.float64), a)
        assert ckpt.view("mask").tolist() == [[True, False, True], [False, False, True]]
        facts = burnpack_facts(ckpt.files[0])
        assert facts.dtype_text("flex", "F32") == "Flex32"
        assert facts.dtype_text("mask32", "U32") == "Bool(U32)"
        assert facts.dtype_text("f32", "F32") == "F32"
        assert ckpt.metadata == {"format": "burnpack"}


def test_scalars_and_empty_file(tmp_path):
    doc = {
        "tensors": {},
        "scalars": {"lr": {"Float": 0.001}, "step": {"UInt": 42}, "flag": {"Bool": True}},
    }
    path = write_burnpack(tmp_path / "s.bpk", [], doc=doc)
    header = read_burnpack(path)
    assert header.tensors == []
    assert burnpack_facts(header).scalar_values() == {"lr": 0.001, "step": 42, "flag": True}


def test_claimed_by_its_bytes_whatever_its_name(tmp_path):
    path = write_burnpack(tmp_path / "weights.bin", [plain("w", np.ones(3, np.float32))])
    with open_checkpoint(path) as ckpt:
        assert ckpt.files[0].format == "burnpack"


def test_a_folder_holding_one_burnpack_opens_it(tmp_path):
    write_burnpack(tmp_path / "model.bpk", [plain("w", np.ones(3, np.float32))])
    with open_checkpoint(tmp_path) as ckpt:
        assert [t.name for t in ckpt.tensors] == ["w"]


@pytest.mark.parametrize("n", [0, 1, 255, 256, 257])
def test_sizes_around_the_alignment(tmp_path, n):
    tensors = [plain("a", np.full(n, 7, np.uint8)), plain("b", np.arange(n, dtype=np.int8))]
    path = write_burnpack(tmp_path / "m.bpk", tensors)
    with open_checkpoint(path) as ckpt:
        assert ckpt.view("a").tolist() == [7] * n
        assert ckpt.view("b").tolist() == np.arange(n, dtype=np.int8).tolist()


def test_nesting_exactly_at_burns_limit_is_read(tmp_path):
    """128 containers (the top map and 127 arrays inside a field a newer burn might add) is
    what burn's reader allows; one more is refused (tests/malformed/burnpack_corpus.py)."""
    w = plain("w", np.ones(4, np.float32))
    body = cbor2.dumps({"tensors": {"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}})
    body = b"\xa2" + body[1:] + cbor2.dumps("future") + b"\x81" * 126 + b"\x80"
    path = tmp_path / "deep.bpk"
    path.write_bytes(burnpack_bytes([w], raw_metadata=body))
    assert burnpack_facts(read_burnpack(path)).extra_fields == ["future"]


def test_an_unknown_field_costs_no_more_than_its_decoding(tmp_path):
    """A field of 2 M zeros (a 100 MB one cost 8 GB): it was walked holding a tuple per value;
    burn ignores a field it does not know, and so does the reader now."""
    import tracemalloc

    w = plain("w", np.ones(4, np.float32))
    body = cbor2.dumps({"tensors": {"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}})
    n = 2_000_000
    body = b"\xa2" + body[1:] + cbor2.dumps("x") + b"\x9a" + n.to_bytes(4, "big") + bytes(n)
    path = tmp_path / "field.bpk"
    path.write_bytes(burnpack_bytes([w], raw_metadata=body))
    tracemalloc.start()
    try:
        header = read_burnpack(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [t.name for t in header.tensors] == ["w"]
    assert peak < 64 << 20  # the decoded list (16 MB of pointers); the walk added ~150 MB
