"""Writing Burnpack as a cast output: burn's bytes reproduced, every source, same values."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import cbor2
import numpy as np
import pytest
import torch
from safetensors.numpy import save_file

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.formats.burnpack import (
    NotBurnpackable,
    burnpack_facts,
    encode_burnpack_head,
    read_burnpack,
)
from inspector.core.layout import TensorEntry
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from tests.burnpack_files import BurnTensor, burnpack_bytes, plain, write_burnpack

BURN_FILE = Path(__file__).parents[2] / "data" / "burn" / "mnist.bpk"
F16, F32 = DTYPES["F16"], DTYPES["F32"]


def cast(src, out, target=F32, **kw):
    with open_checkpoint(src) as ckpt:
        return run_job(cast_checkpoint(ckpt, target, str(out), **kw))


def tensors_of(path) -> dict[str, np.ndarray]:
    with open_checkpoint(path) as ckpt:
        return {t.name: np.array(ckpt.view(t)) for t in ckpt.tensors}


def test_burns_own_file_written_back_unchanged_is_burns_bytes(tmp_path):
    out = tmp_path / "again.bpk"
    cast(BURN_FILE, out)
    assert out.read_bytes() == BURN_FILE.read_bytes()


def test_everything_burn_keeps_survives_a_rewrite(tmp_path):
    doc_tensors = [
        BurnTensor("flex", "Flex32", [3], np.ones(3, np.float32).tobytes(), param_id=2**64 - 1),
        BurnTensor("mask", {"Bool": "Native"}, [2], b"\x01\x00", param_id=0),
        BurnTensor("w", "F32", [2], np.ones(2, np.float32).tobytes()),
    ]
    src = write_burnpack(tmp_path / "s.bpk", doc_tensors, {"producer": "burn", "version": "0.21"})
    raw = src.read_bytes()
    # scalars: floats in their shortest exact width, as ciborium writes them
    n = struct.unpack("<I", raw[6:10])[0]
    doc = cbor2.loads(raw[10 : 10 + n])
    body = cbor2.dumps(doc)[: -0 or None]
    scalars = bytes.fromhex(
        "a2"  # two scalars, sorted
        "626c72" "a1" "65466c6f6174" "f93c00"  # "lr": {"Float": 1.0} as f16
        "6473746570" "a1" "64554" "96e74" "182a"  # "step": {"UInt": 42}
    .replace(" ", ""))  # fmt: skip
    body = body[:1].replace(b"\xa2", b"\xa3") + body[1:] + cbor2.dumps("scalars") + scalars
    src.write_bytes(burnpack_bytes(doc_tensors, raw_metadata=body))
    out = tmp_path / "again.bpk"
    cast(src, out)
    assert out.read_bytes() == src.read_bytes()
    facts = burnpack_facts(open_checkpoint(out).files[0])
    assert facts.scalar_values() == {"lr": 1.0, "step": 42}
    assert facts.param_ids == {"flex": 2**64 - 1, "mask": 0}


def test_encoded_head_follows_burns_writer():
    entries = [TensorEntry("z", F32, (3,)), TensorEntry("a", F16, (0,)), TensorEntry("m", F32, ())]
    head = encode_burnpack_head(entries, {"k": "v"}, param_ids={"a": 7})
    assert head.head[:10] == b"NRUB" + struct.pack("<HI", 1, len(head.head[10:].rstrip(b"\0")))
    assert len(head.head) % 256 == 0 and set(head.head[10 + 0 :].rstrip(b"\0")) != {0}
    # data in the given order, each start on a boundary; the empty tensor takes no room
    assert [s - len(head.head) for s in head.starts] == [0, 256, 256]
    assert head.size == len(head.head) + 256 + 4
    n = struct.unpack("<I", head.head[6:10])[0]
    doc = cbor2.loads(head.head[10 : 10 + n])
    assert list(doc) == ["tensors", "metadata"]
    assert list(doc["tensors"]) == ["a", "m", "z"]  # sorted, as a BTreeMap
    assert doc["tensors"]["a"] == {
        "dtype": "F16",
        "shape": [0],
        "data_offsets": [256, 256],
        "param_id": 7,
    }
    assert list(doc["tensors"]["z"]) == ["dtype", "shape", "data_offsets"]


def test_safetensors_to_burnpack_and_back_is_bit_identical(tmp_path):
    rng = np.random.default_rng(0)
    arrays = {
        "b.weight": rng.standard_normal((5, 7)).astype(np.float32),
        "a.bias": rng.standard_normal(7).astype(np.float16),
        "steps": np.arange(3, dtype=np.int64),
        "mask": np.array([True, False]),
        "x": rng.standard_normal(1000).astype(np.float64),
    }
    save_file(arrays, str(tmp_path / "src.safetensors"))
    cast(tmp_path / "src.safetensors", tmp_path / "m.bpk", keep=["*"])
    cast(tmp_path / "m.bpk", tmp_path / "back.safetensors", keep=["*"])
    back = tensors_of(tmp_path / "back.safetensors")
    assert list(back) == list(tensors_of(tmp_path / "src.safetensors"))  # order kept
    for name, a in arrays.items():
        assert back[name].dtype == a.dtype and np.array_equal(back[name], a)
    meta = open_checkpoint(tmp_path / "m.bpk").metadata
    assert meta == {"format": "burnpack", "producer": "checkpoint-inspector",
                    "version": meta["version"], "layout": "pytorch"}  # fmt: skip
    # and back: still PyTorch's names and layouts, as the .bpk recorded
    assert open_checkpoint(tmp_path / "back.safetensors").metadata == meta | {
        "format": "safetensors"
    }


def test_a_cast_to_burnpack_equals_the_cast_to_safetensors(tmp_path):
    torch.manual_seed(0)
    sd = {"fc.weight": torch.randn(33, 17, dtype=torch.float64), "n": torch.tensor([3])}
    torch.save(sd, tmp_path / "m.pt")
    rep_bpk = cast(tmp_path / "m.pt", tmp_path / "m.bpk", target=F16)
    rep_st = cast(tmp_path / "m.pt", tmp_path / "m.safetensors", target=F16)
    a, b = tensors_of(tmp_path / "m.bpk"), tensors_of(tmp_path / "m.safetensors")
    assert list(a) == list(b)
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].tobytes() == b[k].tobytes()
    assert a["fc.weight"].tobytes() == sd["fc.weight"].to(torch.float16).numpy().tobytes()
    assert rep_bpk.to_json() == rep_st.to_json()


def test_a_sharded_folder_becomes_one_burnpack_file(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    save_file({"a": np.ones(3, np.float32)}, str(src / "model-00001-of-00002.safetensors"))
    save_file({"b": np.zeros(5, np.float64)}, str(src / "model-00002-of-00002.safetensors"))
    (src / "model.safetensors.index.json").write_text(json.dumps({
        "metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors",
                                       "b": "model-00002-of-00002.safetensors"}}))  # fmt: skip
    (src / "config.json").write_text("{}")
    cast(src, tmp_path / "one.bpk")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.bpk", "src"]
    got = tensors_of(tmp_path / "one.bpk")
    assert {k: v.dtype.name for k, v in got.items()} == {"a": "float32", "b": "float32"}
    assert got["b"].tolist() == [0.0] * 5


def test_a_dtype_burn_lacks_is_refused_before_anything_is_written(tmp_path):
    save_file({"q": np.zeros(4, np.uint8)}, str(tmp_path / "s.safetensors"))
    from inspector.core.save.writer import save_arrays

    save_arrays(tmp_path / "f8.safetensors", [("q", DTYPES["F8_E4M3"], np.zeros(4, np.uint8))])
    with pytest.raises(CheckpointError) as e:
        cast(tmp_path / "f8.safetensors", tmp_path / "o.bpk", keep=["q"])
    assert e.value.path == str(tmp_path / "o.bpk")  # the output is what cannot be written
    assert e.value.reason == (
        "cannot be written as Burnpack: tensor 'q' is F8_E4M3, which burn has no dtype for; "
        "cast it to a float burn has (F32, F16, BF16, F64) or write safetensors"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f8.safetensors", "s.safetensors"]


def test_a_burnpack_source_refused_as_burnpack_names_the_output(tmp_path):
    """Its param ids and dtype names are kept on the way, and the refusal still says which
    file cannot be written."""
    src = write_burnpack(tmp_path / "s.bpk", [plain("w", np.ones(2, np.float32))])
    with pytest.raises(CheckpointError) as e:
        cast(src, tmp_path / "o.bpk", target=DTYPES["F8_E4M3"])
    assert e.value.path == str(tmp_path / "o.bpk")
    assert e.value.reason.startswith("cannot be written as Burnpack: tensor 'w' is F8_E4M3")


def test_a_safetensors_file_burn_saved_is_written_as_burnpack_without_pytorch_layout(tmp_path):
    """burn's own SafetensorsStore output has burn's names and layouts: the .bpk must not tell
    burn to adapt them from PyTorch's."""
    save_file({"w": np.ones(2, np.float32)}, str(tmp_path / "b.safetensors"), {"producer": "burn"})
    cast(tmp_path / "b.safetensors", tmp_path / "o.bpk")
    meta = open_checkpoint(tmp_path / "o.bpk").metadata
    assert meta == {"format": "burnpack", "producer": "checkpoint-inspector",
                    "version": meta["version"]}  # fmt: skip


def test_a_burnpack_source_into_a_folder_stays_burnpack(tmp_path):
    (tmp_path / "out").mkdir()
    shutil.copy(BURN_FILE, tmp_path / "m.bpk")
    cast(tmp_path / "m.bpk", tmp_path / "out", target=F16)
    assert open_checkpoint(tmp_path / "out" / "m.bpk").files[0].format == "burnpack"


@pytest.mark.parametrize("producer", ["burn", "someone"])
def test_burnpack_to_safetensors_names_its_format(tmp_path, producer):
    """Burnpack is burn's format: without a recorded layout its names and layouts are burn's,
    whoever wrote it, and the safetensors written from it says so (burn then loads it without
    the adapter)."""
    src = write_burnpack(tmp_path / "s.bpk", [plain("w", np.ones(2, np.float32))],
                         {"format": "burnpack", "producer": producer})  # fmt: skip
    cast(src, tmp_path / "o.safetensors")
    assert open_checkpoint(tmp_path / "o.safetensors").metadata == {
        "format": "safetensors", "producer": producer, "layout": "burn",
    }  # fmt: skip


def test_nan_scalars_keep_their_bits_and_list_json_stays_strict(tmp_path):
    """ciborium writes a float in the narrowest width that keeps its exact bits: x86's 0.0/0.0
    (-NaN) is f9 fe00, a NaN with a payload stays 8 bytes; read back and written, both stay."""
    from inspector.core.listing import listing_document

    E = cbor2.dumps
    tensors = [plain("w", np.ones(1, np.float32))]
    for float_cbor in (bytes.fromhex("f9fe00"), bytes.fromhex("fb7ff8000000000001"),
                       bytes.fromhex("f97c00"), bytes.fromhex("fa3dcccccd")):  # fmt: skip
        body = (b"\xa2" + E("tensors") + E({"w": {"dtype": "F32", "shape": [1],
                "data_offsets": [0, 4]}}) + E("scalars") + b"\xa1" + E("x") + b"\xa1" + E("Float")
                + float_cbor)  # fmt: skip
        src = tmp_path / "s.bpk"
        src.write_bytes(burnpack_bytes(tensors, raw_metadata=body))
        out = tmp_path / "o.bpk"
        cast(src, out)
        assert out.read_bytes() == src.read_bytes(), float_cbor.hex()
        with open_checkpoint(src) as ckpt:
            doc = listing_document(ckpt, F32, None)
        json.loads(doc, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))


def test_a_tensor_burn_cannot_load_is_refused_by_the_writer():
    from inspector.core.formats.burnpack import NotBurnpackable

    with pytest.raises(NotBurnpackable) as e:
        encode_burnpack_head([TensorEntry("ids", DTYPES["I64"], (11 * 1024**3 // 8,))])
    assert (
        str(e.value) == "tensor 'ids' is 11,811,160,064 bytes; burn loads at most 10 GiB per tensor"
    )


def _head_file(tmp_path, head) -> Path:
    """The encoded head as a file of the size it announces (its data zeros, never written)."""
    path = tmp_path / "h.bpk"
    with open(path, "wb") as f:
        f.write(head.head)
        f.truncate(head.size)
    return path


def test_24_scalars_take_a_two_byte_map_head_and_read_back(tmp_path):
    """CBOR's one-byte map head counts up to 23 pairs; 24 need the head b8 18."""
    scalars = {f"s{i:02d}": {"UInt": i} for i in range(24)}
    head = encode_burnpack_head([], scalars=scalars)
    assert b"\xb8\x18" + cbor2.dumps("s00") in head.head
    facts = burnpack_facts(read_burnpack(_head_file(tmp_path, head)))
    assert facts.scalar_values() == {f"s{i:02d}": i for i in range(24)}


def test_files_at_burns_limits_are_written_and_read(tmp_path):
    """Exactly 10 GiB in a tensor and exactly 100 GiB in a file are what burn loads (one byte
    more is refused, as by burn): written, then read back, the data left sparse."""
    u8, gib = DTYPES["U8"], 1024**3
    big = [TensorEntry(f"t{i}", u8, (10 * gib,)) for i in range(9)]
    guess = encode_burnpack_head([*big, TensorEntry("last", u8, (10 * gib - 4096,))])
    last = 10 * gib - 4096 - (guess.size - 100 * gib)  # what the metadata leaves of 100 GiB
    head = encode_burnpack_head([*big, TensorEntry("last", u8, (last,))])
    assert head.size == 100 * gib
    header = read_burnpack(_head_file(tmp_path, head))
    sizes = [t.data_offsets[1] - t.data_offsets[0] for t in header.tensors]
    assert sizes == [10 * gib] * 9 + [last] and header.file_size == 100 * gib
    with pytest.raises(NotBurnpackable) as e:
        encode_burnpack_head([*big, TensorEntry("last", u8, (last + 1,))])
    assert str(e.value) == "the file would be 107,374,182,401 bytes; burn loads at most 100 GB"
    with pytest.raises(NotBurnpackable) as e:  # ten tensors of 10 GiB: the data alone is over
        encode_burnpack_head([*big, TensorEntry("last", u8, (10 * gib,))])
    over = head.size - last + 10 * gib
    assert str(e.value) == f"the file would be {over:,} bytes; burn loads at most 100 GB"


def test_100_000_tensors_are_written_and_read(tmp_path):
    """burn's limit on the tensors of one file, exactly (one more: over-100k-tensors in the
    corpus)."""
    entries = [TensorEntry(f"t{i:06d}", DTYPES["U8"], (0,)) for i in range(100_000)]
    header = read_burnpack(_head_file(tmp_path, encode_burnpack_head(entries)))
    assert len(header.tensors) == 100_000
    assert header.tensors[-1].name == "t099999" and header.tensors[-1].data_offsets == (0, 0)


def test_metadata_of_exactly_100_mb_is_written():
    """burn reads up to 100 MB of metadata; one byte more is refused before anything is
    written."""

    def head(n: int):
        return encode_burnpack_head([], {"k": "x" * n})

    n = 100 * 1024 * 1024 - 100
    n -= struct.unpack("<I", head(n).head[6:10])[0] - 100 * 1024 * 1024
    assert struct.unpack("<I", head(n).head[6:10])[0] == 100 * 1024 * 1024
    with pytest.raises(NotBurnpackable) as e:
        head(n + 1)
    assert (
        str(e.value) == "its metadata would be 104,857,601 bytes; burn reads at most 100 MB of it"
    )
