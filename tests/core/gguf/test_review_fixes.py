"""Defects an independent hostile review found in the GGUF support, one test each."""

from __future__ import annotations

import struct
import warnings

import gguf
import numpy as np
import pytest
import torch
from safetensors.numpy import save_file

from inspector.core.diff import diff_checkpoints
from inspector.core.errors import CheckpointError
from inspector.core.gguf_names import gguf_naming
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.quant.recognise import recognise
from inspector.core.quant.storage_figures import StorageFigures, storage_figures
from inspector.core.quant.values import dequantized_f32
from inspector.core.status import DiffStatus
from tests.gguf_files import Q, _s, info, kv_str, permute, raw_gguf, write_gguf

RNG = np.random.default_rng(0)


def test_a_huge_block_count_in_the_header_is_not_trusted(tmp_path):
    """2**40 blocks: the gguf name map was built block by block and never finished."""
    count = _s(b"llama.block_count") + struct.pack("<IQ", 10, 2**40)
    path = tmp_path / "m.gguf"
    path.write_bytes(raw_gguf([kv_str(b"general.architecture", b"llama"), count],
                              [info(b"blk.0.attn_norm.weight", (8,), 0, 0)], bytes(32)))  # fmt: skip
    with open_checkpoint(path) as ckpt:
        naming = gguf_naming(ckpt)
    assert naming.hf_name("blk.0.attn_norm.weight") == "model.layers.0.input_layernorm.weight"


@pytest.mark.parametrize("arch", ["granite", "smollm3", "arcee"])
def test_q_and_k_rows_and_biases_are_put_back_for_every_permuting_arch(tmp_path, arch):
    h, heads, kv_heads = 128, 4, 2
    q = torch.randn(h, h, generator=torch.Generator().manual_seed(1))
    k = torch.randn(kv_heads * 32, h, generator=torch.Generator().manual_seed(2))
    qb = torch.randn(h, generator=torch.Generator().manual_seed(3))
    save_file({"model.layers.0.self_attn.q_proj.weight": q.numpy(),
               "model.layers.0.self_attn.k_proj.weight": k.numpy(),
               "model.layers.0.self_attn.q_proj.bias": qb.numpy()},
              str(tmp_path / "hf.safetensors"))  # fmt: skip
    w = gguf.GGUFWriter(str(tmp_path / "m.gguf"), arch)
    w.add_block_count(1)
    w.add_uint32(f"{arch}.attention.head_count", heads)
    w.add_uint32(f"{arch}.attention.head_count_kv", kv_heads)
    w.add_tensor("blk.0.attn_q.weight", permute(q, heads, heads).contiguous().numpy())
    w.add_tensor("blk.0.attn_k.weight", permute(k, heads, kv_heads).contiguous().numpy())
    w.add_tensor("blk.0.attn_q.bias", permute(qb, heads, heads).contiguous().numpy())
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with (
        open_checkpoint(tmp_path / "m.gguf") as a,
        open_checkpoint(tmp_path / "hf.safetensors") as b,
    ):
        diffs = run_job(diff_checkpoints(a, b))
    assert [d.status for d in diffs] == [DiffStatus.EQUAL] * 3, diffs


def test_quantized_tensors_with_no_values_or_no_dimensions_are_refused(tmp_path):
    arch = [kv_str(b"general.architecture", b"llama")]
    for dims, why in (((), "tensor 'w': no dimensions (llama.cpp refuses it)"),
                      ((0, 4), "tensor 'w': a Q8_0 tensor of no values")):  # fmt: skip
        path = tmp_path / "m.gguf"
        path.write_bytes(raw_gguf(arch, [info(b"w", dims, 8, 0)]))
        with pytest.raises(CheckpointError) as e:
            open_checkpoint(path)
        assert e.value.reason == why


def test_negative_and_zero_block_scales_are_not_called_bad(tmp_path):
    a = RNG.standard_normal((4, 256)).astype(np.float32)
    a[0, :32] = 0  # an all-zero block: scale 0
    path = write_gguf(tmp_path / "m.gguf", {"w": (a, Q.Q4_0)})
    with open_checkpoint(path) as ckpt:
        f = storage_figures(ckpt, recognise(ckpt.tensors).weights["w"])
    assert f.bad_scales == 0 and f.scale_min < 0 < f.scale_max
    assert f.line().endswith("· 0 inf or NaN")


def test_a_type_without_one_scale_per_block_says_so(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(raw_gguf([kv_str(b"general.architecture", b"llama")],
                              [info(b"w", (256,), 34, 0)], bytes(54)))  # TQ1_0  # fmt: skip
    with open_checkpoint(path) as ckpt:
        figures = storage_figures(ckpt, recognise(ckpt.tensors).weights["w"])
    assert figures == StorageFigures(0, -1, 0, None, None, 0)  # no code or scale counted
    assert figures.line() == "block scales: not one per block at a fixed place in this type"


def _q8_0_blocks(scales: list[float]) -> bytes:
    """Q8_0 blocks of codes 1, each with its F16 scale ``d`` as given."""
    blocks = np.ones((len(scales), 34), np.uint8)
    blocks[:, :2] = np.array(scales, np.float16).view(np.uint8).reshape(-1, 2)
    return raw_gguf([kv_str(b"general.architecture", b"llama")],
                    [info(b"w", (32 * len(scales),), 8, 0)], blocks.tobytes())  # fmt: skip


@pytest.mark.parametrize(
    ("scales", "want", "line"),
    [
        ([0.5, -2.0, np.inf, np.nan], StorageFigures(0, 0, 0, -2.0, 0.5, 2),
         "block scales -2 … 0.5 · 2 inf or NaN"),
        ([np.nan, -np.inf], StorageFigures(0, 0, 0, None, None, 2),
         "block scales: none finite · 2 inf or NaN"),
    ],
)  # fmt: skip
def test_block_scales_give_their_finite_range_and_count_the_rest(tmp_path, scales, want, line):
    """The figures of a GGUF weight are its blocks' scales only (no codes counted, nothing
    saturated): the range of the finite ones, negative included, and how many are inf or NaN;
    a weight with no finite scale says so instead of a range."""
    path = tmp_path / "m.gguf"
    path.write_bytes(_q8_0_blocks(scales))
    with open_checkpoint(path) as ckpt:
        figures = storage_figures(ckpt, recognise(ckpt.tensors).weights["w"])
    assert figures == want
    assert figures.line() == line


def test_nan_scales_warn_nothing(tmp_path):
    blocks = np.zeros((1, 34), np.uint8)
    blocks[0, :2] = np.frombuffer(np.float16(np.inf).tobytes(), np.uint8)
    blocks[0, 2:18] = 1  # inf × 1; the other codes are 0: inf × 0 is numpy's "invalid value"
    path = tmp_path / "m.gguf"
    path.write_bytes(raw_gguf([kv_str(b"general.architecture", b"llama")],
                              [info(b"w", (32,), 8, 0)], blocks.tobytes()))  # fmt: skip
    with open_checkpoint(path) as ckpt, warnings.catch_warnings():
        warnings.simplefilter("error")
        values = np.concatenate(list(dequantized_f32(ckpt, recognise(ckpt.tensors).weights["w"])))
    assert np.isinf(values[:16]).all() and np.isnan(values[16:]).all()


def test_a_part_from_another_series_is_refused(tmp_path):
    from tests.core.gguf.test_split import series

    parts = series(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    w = gguf.GGUFWriter(str(other / "m.gguf"), "llama", split_max_tensors=2)
    for i in range(6):
        w.add_tensor(f"x{i}", np.ones(4, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    (other / "m-00003-of-00003.gguf").replace(parts[2])
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(parts[0])
    assert "a part from another series?" in e.value.reason


def test_a_folder_of_one_gguf_or_one_series_opens(tmp_path):
    write_gguf(tmp_path / "model.gguf", {"w": (np.ones(4, np.float32), None)})
    with open_checkpoint(tmp_path) as ckpt:
        assert [t.name for t in ckpt.tensors] == ["w"]


def test_an_alignment_that_is_not_a_uint32_is_refused(tmp_path):
    kv = _s(b"general.alignment") + struct.pack("<IQ", 10, 32)  # uint64
    path = tmp_path / "m.gguf"
    path.write_bytes(raw_gguf([kv_str(b"general.architecture", b"llama"), kv]))
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(path)
    assert e.value.reason == "general.alignment has value type 10, not uint32"


def test_block_types_are_listed_most_used_first_then_by_name(tmp_path):
    """The scheme text counts the block types, the most used first and equal counts by name
    (not in the file's order, which here puts Q8_0 before Q5_0)."""
    a = RNG.standard_normal((2, 32)).astype(np.float32)
    tensors = {"a": (a, Q.Q8_0), "b": (a, Q.Q5_0), "c": (a, Q.Q4_0), "d": (a, Q.Q4_0)}
    path = write_gguf(tmp_path / "m.gguf", tensors)
    with open_checkpoint(path) as ckpt:
        assert [t.name for t in ckpt.tensors] == ["a", "b", "c", "d"]
        assert recognise(ckpt.tensors).scheme_text == "GGUF Q4_0×2, Q5_0×1, Q8_0×1"
