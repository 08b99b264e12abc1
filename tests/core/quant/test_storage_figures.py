"""A quantized weight's storage figures (codes used of those possible, codes at the format's
largest magnitude, the range of its scales and how many are bad), counted over many small
blocks of rows as over one: each test makes the blocks a few rows high, so a count that kept
only the last block, or a block lacking the largest code, shows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.quant import storage_figures as sf
from inspector.core.quant.of_checkpoint import quant_layout
from inspector.core.quant.storage_figures import StorageFigures, storage_figures
from inspector.core.quantize.job import quantize_checkpoint
from inspector.core.quantize.schemes import SCHEMES
from tests.core.quantize.models import llama_folder, llama_tensors
from tests.quant_folders import F16, I32, folder

from .test_gptq_awq import _pack_cols, _pack_rows

M = "model.layers.0.mlp.up_proj"
Q = "model.layers.0.self_attn.q_proj"


def _figures(path: Path, name: str) -> StorageFigures:
    with open_checkpoint(str(path)) as ckpt:
        return storage_figures(ckpt, quant_layout(ckpt).weights[name])


def _gptq(path: Path, scales: np.ndarray) -> Path:
    """GPTQ 4-bit, 128 inputs × 192 outputs: codes 2…13 everywhere, but code 0 once and code 15
    once, both in the first 64 outputs (the first block of rows)."""
    rng = np.random.default_rng(3)
    codes = rng.integers(2, 14, (128, 192), dtype=np.uint8)
    codes[3, 5], codes[7, 10] = 0, 15
    tensors = [
        (f"{M}.qweight", I32, _pack_rows(codes)),
        (f"{M}.qzeros", I32, _pack_cols(np.full((2, 192), 7, np.uint8), list(range(8)))),
        (f"{M}.scales", F16, scales),
        (f"{M}.g_idx", I32, (np.arange(128) // 64).astype(np.int32)),
    ]
    qc = {"quant_method": "gptq", "bits": 4, "group_size": 64, "desc_act": False}
    return folder(path, tensors, qc)


def test_gptq_codes_are_counted_over_every_block_of_output_rows(tmp_path, monkeypatch):
    """Three blocks of 64 outputs: the 14 codes used, 0 and 15 saturated (both in the first
    block, which the later blocks lack), the scales' range, a scale of 0 counted bad; the line
    and the JSON show the same numbers."""
    monkeypatch.setattr(sf, "STATS_CHUNK_BYTES", 1)  # one block of 64 outputs at a time
    scales = np.full((2, 192), 0.5, np.float16)
    scales[1, 4], scales[0, 100] = 2.0, 0.0
    got = _figures(_gptq(tmp_path / "q", scales), f"{M}.weight")
    assert got == StorageFigures(14, 16, 2, 0.5, 2.0, 1)
    assert got.line() == "codes used 14 of 16 · saturated 2 · scales 0.5 … 2 · 1 bad"
    assert got.to_json() == {"codes_used": 14, "codes_possible": 16, "saturated": 2,
                             "scale_min": 0.5, "scale_max": 2.0, "bad_scales": 1}  # fmt: skip


def test_a_weight_without_a_finite_positive_scale_says_so_in_its_line(tmp_path):
    """Scales all 0 or NaN: no range to give (None in the JSON), every scale bad."""
    scales = np.zeros((2, 192), np.float16)
    scales[1] = np.nan
    got = _figures(_gptq(tmp_path / "q", scales), f"{M}.weight")
    assert got == StorageFigures(14, 16, 2, None, None, 384)
    assert got.line() == "codes used 14 of 16 · saturated 2 · no finite scale · 384 bad"
    assert json.loads(json.dumps(got.to_json()))["scale_min"] is None


@pytest.fixture(scope="module")
def quantized(tmp_path_factory):
    """One small model quantized by our own quantize job with a preset: ``quantized(scheme)``,
    each made once per module."""
    from inspector.core.save.writer import save_arrays

    root = tmp_path_factory.mktemp("figures")
    src = llama_folder(root / "src")
    tensors = llama_tensors()
    for name, _dtype, values in tensors:
        if name == f"{Q}.weight":  # rows 0…5 of q_proj all ≤ 0: no positive code in them
            values[:6] = -np.abs(values[:6])
    save_arrays(src / "model.safetensors", tensors)
    made: dict[str, Path] = {}

    def of(scheme: str) -> Path:
        if scheme not in made:
            out = root / scheme
            run_job(quantize_checkpoint(open_checkpoint(str(src)), SCHEMES[scheme], str(out)))
            made[scheme] = out
        return made[scheme]

    return of


def _stored(path: Path, name: str) -> np.ndarray:
    with open_checkpoint(str(path)) as ckpt:
        t = next(t for t in ckpt.tensors if t.name == name)
        return np.array(ckpt.view(t))


def _expected(histogram: np.ndarray, saturated: list[int]) -> tuple[int, int]:
    return int((histogram > 0).sum()), int(histogram[saturated].sum())


def test_packed_int4_codes_are_counted_over_every_block_of_rows(quantized, monkeypatch):
    """W4A16 (compressed-tensors pack-quantized): the codes are the nibbles of the packed int32
    words (value + 8, eight a word, no padding at 256 columns); read three rows at a time, the
    first two blocks without the largest code (their weights are all ≤ 0)."""
    monkeypatch.setattr(sf, "STATS_CHUNK_BYTES", 256 * 4 * 3)
    words = _stored(quantized("W4A16"), f"{Q}.weight_packed").view(np.uint8).reshape(-1)
    histogram = np.bincount(words & 0x0F, minlength=16) + np.bincount(words >> 4, minlength=16)
    scales = _stored(quantized("W4A16"), f"{Q}.weight_scale").astype(np.float64)
    got = _figures(quantized("W4A16"), f"{Q}.weight")
    used, saturated = _expected(histogram, [0, 15])
    assert got == StorageFigures(used, 16, saturated, scales.min(), scales.max(), 0)
    assert saturated > 0 and used > 8


def test_fp8_codes_are_counted_over_every_block_of_rows(quantized, monkeypatch):
    """FP8_DYNAMIC: one code a byte, 254 possible (0x7F and 0xFF are NaN), ±448 saturated."""
    monkeypatch.setattr(sf, "STATS_CHUNK_BYTES", 256 * 4 * 3)
    codes = _stored(quantized("FP8_DYNAMIC"), f"{Q}.weight").view(np.uint8).reshape(-1)
    histogram = np.bincount(codes, minlength=256)
    scales = _stored(quantized("FP8_DYNAMIC"), f"{Q}.weight_scale").astype(np.float64)
    got = _figures(quantized("FP8_DYNAMIC"), f"{Q}.weight")
    used, saturated = _expected(histogram, [0x7E, 0xFE])
    assert got == StorageFigures(used, 254, saturated, scales.min(), scales.max(), 0)
    assert saturated > 0


def test_e8m0_scales_are_read_as_powers_of_two(quantized):
    """MXFP4A16: the scales are U8 exponents, 2 ** (e - 127), not the bytes' values."""
    exponents = _stored(quantized("MXFP4A16"), f"{Q}.weight_scale").reshape(-1)
    assert exponents.dtype == np.uint8 and (exponents != 0xFF).all()
    got = _figures(quantized("MXFP4A16"), f"{Q}.weight")
    assert (got.scale_min, got.scale_max, got.bad_scales) == (
        2.0 ** (int(exponents.min()) - 127),
        2.0 ** (int(exponents.max()) - 127),
        0,
    )
    assert got.scale_max < 1  # weights of 0.02: no byte value, a power of two below 1
