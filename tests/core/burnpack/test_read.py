"""Reading Burnpack: burn's own file, every dtype burn writes, and what only Burnpack holds."""

from __future__ import annotations

import math
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
        # kept only where burn's name is not the plain name of the bytes (written back as is)
        assert facts.burn_dtypes == {
            "flex": "Flex32", "mask": {"Bool": "Native"}, "mask8": {"Bool": "U8"},
            "mask32": {"Bool": "U32"}, "old_bool": "Bool",
        }  # fmt: skip
        assert ckpt.metadata == {"format": "burnpack"}


def test_scalars_and_empty_file(tmp_path):
    doc = {
        "tensors": {},
        "metadata": {"producer": "burn"},
        "scalars": {"lr": {"Float": 0.001}, "step": {"UInt": 42}, "flag": {"Bool": True}},
    }
    path = write_burnpack(tmp_path / "s.bpk", [], doc=doc)
    header = read_burnpack(path)
    assert header.tensors == []
    assert burnpack_facts(header).scalar_values() == {"lr": 0.001, "step": 42, "flag": True}
    assert burnpack_facts(header).extra_fields == []  # metadata and scalars are burn's own


def test_claimed_by_its_bytes_whatever_its_name(tmp_path):
    path = write_burnpack(tmp_path / "weights.bin", [plain("w", np.ones(3, np.float32))])
    with open_checkpoint(path) as ckpt:
        assert ckpt.files[0].format == "burnpack"


def test_a_folder_holding_one_burnpack_opens_it(tmp_path):
    write_burnpack(tmp_path / "model.bpk", [plain("w", np.ones(3, np.float32))])
    with open_checkpoint(tmp_path) as ckpt:
        assert [t.name for t in ckpt.tensors] == ["w"]


def test_a_folder_holding_two_burnpacks_asks_which(tmp_path):
    """Two .bpk files are two models (or two epochs): the folder does not choose."""
    from inspector.core.errors import AmbiguousCheckpointError

    for name in ("a.bpk", "b.bpk"):
        write_burnpack(tmp_path / name, [plain("w", np.ones(3, np.float32))])
    with pytest.raises(AmbiguousCheckpointError) as e:
        open_checkpoint(tmp_path)
    assert e.value.reason == "folder holds 2 Burnpack or GGUF files; open one file"
    assert e.value.choices == [str(tmp_path / "a.bpk"), str(tmp_path / "b.bpk")]


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


def test_scalars_at_the_edges_of_their_types_are_read(tmp_path):
    """burn's Int is an i64 and its UInt a u64: both ends of each are scalars it writes (one
    past either end is refused: tests/malformed/burnpack_corpus.py)."""
    edges = {"i_min": {"Int": -(2**63)}, "i_max": {"Int": 2**63 - 1}, "i": {"Int": -5},
             "u_min": {"UInt": 0}, "u_max": {"UInt": 2**64 - 1}}  # fmt: skip
    path = write_burnpack(tmp_path / "s.bpk", [], doc={"tensors": {}, "scalars": edges})
    assert burnpack_facts(read_burnpack(path)).scalar_values() == {
        "i_min": -(2**63), "i_max": 2**63 - 1, "i": -5, "u_min": 0, "u_max": 2**64 - 1,
    }  # fmt: skip


def test_non_finite_float_scalars_are_listed_as_strings(tmp_path):
    """A listing's JSON is strict: NaN and the infinities become "nan", "inf", "-inf"."""
    floats = {"nan": {"Float": math.nan}, "inf": {"Float": math.inf},
              "ninf": {"Float": -math.inf}, "lr": {"Float": -0.5}}  # fmt: skip
    path = write_burnpack(tmp_path / "s.bpk", [], doc={"tensors": {}, "scalars": floats})
    assert burnpack_facts(read_burnpack(path)).scalar_values() == {
        "nan": "nan", "inf": "inf", "ninf": "-inf", "lr": -0.5,
    }  # fmt: skip


def test_an_empty_tensor_whose_first_dimension_is_u64_max_is_read(tmp_path):
    """[2**64 - 1, 0] holds no element, and burn's running product never passes u64 on the way
    to 0 (one that does first is refused: shape-huge-then-zero in the corpus). Flex32 takes
    the careful path, which reads every size from 0 to u64's largest."""
    tensor = BurnTensor("e", "Flex32", [2**64 - 1, 0], b"")
    header = read_burnpack(write_burnpack(tmp_path / "e.bpk", [tensor]))
    (t,) = header.tensors
    assert (t.name, t.dtype_name, t.shape, t.data_offsets) == ("e", "F32", (2**64 - 1, 0), (0, 0))


def test_the_tag_table_built_on_first_use_refuses_every_tag(tmp_path, monkeypatch):
    """The table of tags refused is built by the first read of a process; a test run reads
    many files before this one, so it is dropped here to read as a new process does: a date
    (tag 1) and self-described CBOR (55799, cbor2 would skip it) are still refused."""
    from inspector.core.errors import CheckpointError
    from inspector.core.formats.burnpack import reader

    w = plain("w", np.ones(4, np.float32))
    body = cbor2.dumps({"tensors": {"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}})
    for tag, raw in ((1, b"\xa2" + body[1:] + cbor2.dumps("when") + b"\xc1\x01"),
                     (55799, b"\xd9\xd9\xf7" + body)):  # fmt: skip
        monkeypatch.setattr(reader, "_TAG_DECODERS", None)
        path = tmp_path / "t.bpk"
        path.write_bytes(burnpack_bytes([w], raw_metadata=raw))
        with pytest.raises(CheckpointError) as e:
            read_burnpack(path)
        assert e.value.reason == (
            f"metadata holds CBOR tag {tag} (a shared or string reference, a date, a bignum…); "
            "burn's writer never writes tags, and this tool reads none"
        )
