"""Reading GGUF: shapes in the HF order, plain dtypes as they are, block types as quantized
weights dequantized bit-exactly as the ggml project's reference (the gguf package) does."""

from __future__ import annotations

import resource
import struct

import numpy as np
import pytest
from gguf.quants import dequantize, quantize

from inspector.core.formats.gguf import gguf_facts
from inspector.core.opening import open_checkpoint
from inspector.core.quant.recognise import recognise
from inspector.core.quant.values import dequantized_f32
from tests.gguf_files import Q, info, kv_str, kv_u32, raw_gguf, write_gguf

RNG = np.random.default_rng(0)


def test_plain_and_quantized_tensors(tmp_path):
    a = RNG.standard_normal((64, 256)).astype(np.float32)
    path = write_gguf(
        tmp_path / "m.gguf",
        {
            "token_embd.weight": (RNG.standard_normal((100, 64)).astype(np.float32), None),
            "blk.0.attn_q.weight": (a, Q.Q8_0),
            "blk.0.attn_norm.weight": (np.ones(64, np.float16), None),
        },
        tokens=32_000,
    )
    with open_checkpoint(path) as ckpt:
        by = {t.name: t for t in ckpt.tensors}
        assert by["token_embd.weight"].dtype.name == "F32"
        assert by["token_embd.weight"].shape == (100, 64)  # HF order; the file says [64, 100]
        facts = gguf_facts(ckpt.files[0])
        assert facts.dims["token_embd.weight"] == (64, 100)
        assert facts.architecture == "llama"
        assert facts.type_counts() == {"F16": 1, "F32": 1, "Q8_0": 1}
        assert str(facts.kv["tokenizer.ggml.tokens"]) == "[32,000 × string]"
        layout = recognise(ckpt.tensors)
        w = layout.weights["blk.0.attn_q.weight"]
        assert (w.shape, w.stored_dtype, w.bits_per_weight) == ((64, 256), "Q8_0", 8.5)
        got = np.concatenate(list(dequantized_f32(ckpt, w)))
        ref = dequantize(quantize(a, Q.Q8_0), Q.Q8_0)
        assert np.array_equal(got.reshape(64, 256), ref)


@pytest.mark.parametrize("qtype", [Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.BF16])
def test_every_type_the_writer_quantizes_matches_the_reference(tmp_path, qtype):
    a = (RNG.standard_normal((33, 128)) * 3).astype(np.float32)
    path = write_gguf(tmp_path / "m.gguf", {"w": (a, qtype)})
    ref = dequantize(quantize(a, qtype), qtype)
    with open_checkpoint(path) as ckpt:
        layout = recognise(ckpt.tensors)
        if qtype is Q.BF16:  # a plain dtype: read as it is
            assert layout is None
            got = ckpt.view("w").astype(np.float32)
        else:
            got = np.concatenate(list(dequantized_f32(ckpt, layout.weights["w"]))).reshape(33, 128)
    assert np.array_equal(got, ref)


def test_opening_reads_the_header_only(tmp_path):
    """A 256 MiB tensor in a sparse file: mapping the header only costs a few page faults,
    touching the data costs 500 and more (measured: 534)."""
    n = 64 << 20  # F32 values
    head = raw_gguf([kv_str(b"general.architecture", b"llama")], [info(b"w", (n,), 0, 0)])
    path = tmp_path / "big.gguf"
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(len(head) + 4 * n)
    open_checkpoint(path).close()  # warm: imports, first allocations
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    with open_checkpoint(path) as ckpt:
        assert ckpt["w"].shape == (n,)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before < 100  # touched: 500+


def test_a_type_the_package_cannot_dequantize_is_listed_and_its_cast_refused(tmp_path):
    """Q8_K (an intermediate type of ggml's dot products) has no dequantize in the package."""
    from inspector.core.cast.job import cast_checkpoint
    from inspector.core.dtypes import DTYPES
    from inspector.core.errors import CheckpointError
    from inspector.core.progress import run_job

    head = raw_gguf([kv_str(b"general.architecture", b"llama")], [info(b"w", (256,), 15, 0)])
    path = tmp_path / "k.gguf"
    path.write_bytes(head + bytes(292))
    with open_checkpoint(path) as ckpt:
        layout = recognise(ckpt.tensors)
        assert layout.weights["w"].stored_dtype == "Q8_K"
        with pytest.raises(CheckpointError) as e:
            run_job(cast_checkpoint(ckpt, DTYPES["F32"], str(tmp_path / "o.safetensors")))
    assert e.value.reason == (
        "the gguf package cannot dequantize Q8_K; a cast would write the blocks as values, "
        "so it is refused"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.gguf"]


def test_list_json_has_both_orders_and_the_header(tmp_path):
    import json

    from inspector.core.dtypes import DTYPES
    from inspector.core.listing import listing_document

    a = RNG.standard_normal((64, 256)).astype(np.float32)
    path = write_gguf(tmp_path / "m.gguf", {"q": (a, Q.Q8_0), "e": (a, None)}, tokens=100)
    with open_checkpoint(path) as ckpt:
        doc = json.loads(listing_document(ckpt, DTYPES["F32"], recognise(ckpt.tensors)))
    rows = {r["name"]: r for r in doc["tensors"]}
    assert rows["q"]["shape"] == [64, 256] and rows["q"]["gguf_dims"] == [256, 64]
    assert rows["q"]["dtype"] == "Q8_0" and rows["q"]["quant"]["bits_per_weight"] == 8.5
    assert rows["e"]["shape"] == [64, 256] and rows["e"]["gguf_dims"] == [256, 64]
    g = doc["gguf"]
    assert (g["version"], g["architecture"]) == (3, "llama")
    assert g["types"] == {"F32": 1, "Q8_0": 1}
    assert g["metadata"]["tokenizer.ggml.tokens"] == {"array_of": "string", "count": 100}


def _open_raw(tmp_path, data: bytes):
    path = tmp_path / "m.gguf"
    path.write_bytes(data)
    return open_checkpoint(path)


def test_a_gguf_of_its_24_byte_header_alone_opens_with_nothing_in_it(tmp_path):
    """No key/values, no tensors: the counts end exactly at the end of the file, which is not
    "too short" (the header is 24 bytes) and not truncated."""
    with _open_raw(tmp_path, b"GGUF" + struct.pack("<IQQ", 3, 0, 0)) as ckpt:
        assert (ckpt.tensors, ckpt.metadata) == ([], {})


def test_a_key_value_of_the_smallest_size_is_not_counted_as_too_many(tmp_path):
    """An empty key and a uint8 take the 13 bytes the count check assumes at least: one
    key/value in the 13 bytes after the header fits."""
    kv = struct.pack("<Q", 0) + struct.pack("<IB", 0, 7)
    with _open_raw(tmp_path, b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + kv) as ckpt:
        assert ckpt.metadata == {"": "7"}


def test_an_alignment_of_1_packs_the_tensors_without_padding(tmp_path):
    """1 is 2**0: llama.cpp accepts it, and the second tensor starts right after the first."""
    data = bytes([1, 2, 3]) + np.array([1.5, -2.0], np.float32).tobytes()
    kvs = [kv_str(b"general.architecture", b"llama"), kv_u32(b"general.alignment", 1)]
    infos = [info(b"a", (3,), 24, 0), info(b"b", (2,), 0, 3)]  # I8 then F32, at offset 3
    with _open_raw(tmp_path, raw_gguf(kvs, infos, data, align=1)) as ckpt:
        assert ckpt.view("a").tolist() == [1, 2, 3]
        assert ckpt.view("b").tolist() == [1.5, -2.0]


def test_a_tensor_of_four_dimensions_opens(tmp_path):
    """ggml's most (GGML_MAX_DIMS) is 4: only a fifth is refused."""
    infos = [info(b"w", (2, 1, 1, 3), 0, 0)]
    with _open_raw(tmp_path, raw_gguf([], infos, bytes(24))) as ckpt:
        assert ckpt["w"].shape == (3, 1, 1, 2)


def test_arrays_of_64_elements_are_kept_and_longer_ones_summarised(tmp_path):
    path = write_gguf(tmp_path / "a.gguf", {"w": (np.ones(4, np.float32), None)}, tokens=64)
    with open_checkpoint(path) as ckpt:
        kv = gguf_facts(ckpt.files[0]).kv
    assert kv["tokenizer.ggml.tokens"] == [f"t{i}" for i in range(64)]
    assert kv["tokenizer.ggml.scores"] == [0.0] * 64
    path = write_gguf(tmp_path / "b.gguf", {"w": (np.ones(4, np.float32), None)}, tokens=65)
    with open_checkpoint(path) as ckpt:
        kv = gguf_facts(ckpt.files[0]).kv
    assert str(kv["tokenizer.ggml.tokens"]) == "[65 × string]"
    assert str(kv["tokenizer.ggml.scores"]) == "[65 × float32]"


def test_a_string_value_that_is_not_utf8_is_read_with_replacement_characters(tmp_path):
    """A value is shown, not judged (llama.cpp does not check it either); only keys and tensor
    names must be UTF-8."""
    kvs = [kv_str(b"general.architecture", b"llama"), kv_str(b"general.name", b"caf\xe9")]
    with _open_raw(tmp_path, raw_gguf(kvs)) as ckpt:
        assert ckpt.metadata["general.name"] == "caf\ufffd"


def test_the_metadata_is_every_key_value_as_one_line_of_text(tmp_path):
    path = write_gguf(tmp_path / "m.gguf", {"w": (np.ones(4, np.float32), None)}, tokens=65)
    with open_checkpoint(path) as ckpt:
        assert ckpt.metadata == {
            "general.architecture": "llama",
            "llama.block_count": "1",
            "llama.context_length": "128",
            "tokenizer.ggml.tokens": "[65 × string]",
            "tokenizer.ggml.scores": "[65 × float32]",
        }


def test_type_counts_are_most_common_first_then_by_name(tmp_path):
    """In the order of the file the types come Q8_0, F32, F16; counted and ordered they are
    Q8_0 (2), then the ties by name."""
    a = np.ones((4, 32), np.float32)
    tensors = {
        "a": (a, Q.Q8_0),
        "b": (a, Q.Q8_0),
        "c": (a, None),
        "d": (a.astype(np.float16), None),
    }
    with open_checkpoint(write_gguf(tmp_path / "m.gguf", tensors)) as ckpt:
        counts = gguf_facts(ckpt.files[0]).type_counts()
    assert list(counts.items()) == [("Q8_0", 2), ("F16", 1), ("F32", 1)]


def test_stacked_experts_dequantize_every_expert(tmp_path):
    """A 3-D quantized tensor ([experts, rows, columns], as llama.cpp stores MoE experts): its
    rows are every expert's, not the first dimension's."""
    a = RNG.standard_normal((3, 5, 64)).astype(np.float32)
    path = write_gguf(tmp_path / "m.gguf", {"blk.0.ffn_up_exps.weight": (a, Q.Q8_0)})
    with open_checkpoint(path) as ckpt:
        w = recognise(ckpt.tensors).weights["blk.0.ffn_up_exps.weight"]
        got = np.concatenate(list(dequantized_f32(ckpt, w)))
    assert w.shape == (3, 5, 64)
    assert np.array_equal(got.reshape(3, 5, 64), dequantize(quantize(a, Q.Q8_0), Q.Q8_0))
