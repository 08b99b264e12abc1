"""GGUF files made by llama.cpp's own converter (and quantizer, where present) from a tiny
Llama whose HF weights are beside them (tests/data/gguf/README.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from gguf import GGUFReader
from gguf.quants import dequantize
from safetensors.numpy import load_file

from inspector.core.cast.job import cast_checkpoint
from inspector.core.diff import diff_checkpoints
from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.quant.recognise import recognise
from inspector.core.quant.values import dequantized_f32
from inspector.core.status import DiffStatus
from tests.gguf_files import permute

DATA = Path(__file__).parents[2] / "data" / "gguf"
HF = DATA / "tiny-llama" / "model.safetensors"
BLOCK_FILES = sorted(p for p in DATA.glob("tiny-llama-*.gguf") if p.name != "tiny-llama-F16.gguf")
N_HEAD, N_KV = 4, 2


def test_the_converter_permutes_as_our_torch_reference_says():
    hf = load_file(str(HF))
    with open_checkpoint(DATA / "tiny-llama-F16.gguf") as ckpt:
        q = torch.from_numpy(np.array(ckpt.view("blk.0.attn_q.weight")))
        k = torch.from_numpy(np.array(ckpt.view("blk.0.attn_k.weight")))
    want_q = permute(torch.from_numpy(hf["model.layers.0.self_attn.q_proj.weight"]), N_HEAD, N_HEAD)
    want_k = permute(torch.from_numpy(hf["model.layers.0.self_attn.k_proj.weight"]), N_HEAD, N_KV)
    assert torch.equal(q, want_q) and torch.equal(k, want_k)


def test_the_f16_file_equals_its_hf_model_under_hf_names():
    with open_checkpoint(DATA / "tiny-llama-F16.gguf") as a, open_checkpoint(HF) as b:
        diffs = run_job(diff_checkpoints(a, b))
    assert len(diffs) == 12
    assert {d.status for d in diffs} <= {DiffStatus.EQUAL, DiffStatus.DTYPE_ONLY}  # norms: F32
    names = {d.name_b or d.name for d in diffs}
    assert names == set(load_file(str(HF)))


def test_a_cast_back_gives_the_hf_model(tmp_path):
    with open_checkpoint(DATA / "tiny-llama-F16.gguf") as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(tmp_path / "back.safetensors")))
    back, hf = load_file(str(tmp_path / "back.safetensors")), load_file(str(HF))
    assert set(back) == set(hf)
    for name, a in hf.items():
        np.testing.assert_array_equal(back[name], a, err_msg=name)


@pytest.mark.parametrize("path", BLOCK_FILES, ids=lambda p: p.stem)
def test_every_block_tensor_dequantizes_as_the_reference(path):
    ref = {t.name: dequantize(t.data, t.tensor_type) for t in GGUFReader(str(path)).tensors}
    with open_checkpoint(path) as ckpt:
        layout = recognise(ckpt.tensors)
        assert layout is not None and layout.weights
        for name, w in layout.weights.items():
            got = np.concatenate(list(dequantized_f32(ckpt, w))).reshape(w.shape)
            assert np.array_equal(got, ref[name]), name


@pytest.mark.parametrize("path", BLOCK_FILES, ids=lambda p: p.stem)
def test_the_precision_lost_against_the_hf_model(path):
    with open_checkpoint(path) as a, open_checkpoint(HF) as b:
        diffs = run_job(diff_checkpoints(a, b, quant_a=recognise(a.tensors)))
    quantized = [d for d in diffs if d.quant == "gguf"]
    assert quantized and all(d.name_b is not None for d in quantized)
    # quantization noise, not a row order gone wrong (a wrong order gives ~1.4)
    assert all(d.rel_fro_err < 0.2 for d in quantized), [(d.name, d.rel_fro_err) for d in diffs]
