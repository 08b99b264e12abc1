"""gpt-oss's MXFP4 experts (``quant_method: mxfp4``): ``*_blocks`` + ``*_scales`` dequantized
into the expert tensor transformers builds, bit for bit as its ``convert_moe_packed_tensors``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from tests.quant_folders import U8, folder

torch = pytest.importorskip("torch")
M = "model.layers.0.mlp.experts.gate_up_proj"


def _tensors(seed: int = 0, experts: int = 3, rows: int = 48, groups: int = 4) -> list:
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, 256, (experts, rows, groups, 16), dtype=np.uint8)
    scales = rng.integers(115, 135, (experts, rows, groups), dtype=np.uint8)
    scales[0, 0, 0], scales[0, 1, 0], scales[1, 0, 1] = 0, 255, 254  # 2**-127, inf, 2**127
    return [(f"{M}_blocks", U8, blocks), (f"{M}_scales", U8, scales)]


def test_a_cast_writes_what_transformers_dequantizes(tmp_path):
    from safetensors.torch import load_file
    from transformers.integrations.mxfp4 import convert_moe_packed_tensors

    from inspector.core.cast.job import cast_checkpoint

    tensors = _tensors()
    folder(tmp_path / "q", tensors, {"quant_method": "mxfp4", "modules_to_not_convert": []})
    with open_checkpoint(str(tmp_path / "q")) as ckpt:
        report = run_job(
            cast_checkpoint(ckpt, DTYPES["BF16"], str(tmp_path / "plain"), chunk_bytes=4096)
        )
    got = load_file(tmp_path / "plain" / "model.safetensors")
    want = convert_moe_packed_tensors(
        torch.from_numpy(tensors[0][2]), torch.from_numpy(tensors[1][2]), dtype=torch.bfloat16
    )
    assert set(got) == {M}
    assert got[M].shape == want.shape == (3, 128, 48)
    assert torch.equal(got[M].view(torch.int16), want.view(torch.int16))  # NaN and inf too
    assert report.tensors[0].dequantized == "mxfp4"
    config = json.loads((tmp_path / "plain" / "config.json").read_text())
    assert "quantization_config" not in config


def test_blocks_that_are_not_gpt_oss_shaped_are_refused(tmp_path):
    from inspector.core.cast.job import cast_checkpoint
    from inspector.core.errors import CheckpointError

    blocks = np.zeros((3, 48, 4, 8), np.uint8)  # 8 bytes a block, not 16
    scales = np.zeros((3, 48, 4), np.uint8)
    tensors = [(f"{M}_blocks", U8, blocks), (f"{M}_scales", U8, scales)]
    folder(tmp_path / "q", tensors, {"quant_method": "mxfp4"})
    with open_checkpoint(str(tmp_path / "q")) as ckpt, pytest.raises(CheckpointError) as e:
        run_job(cast_checkpoint(ckpt, DTYPES["BF16"], str(tmp_path / "plain")))
    assert "gpt-oss stores [experts, rows, groups, 16]" in str(e.value)
    assert not (tmp_path / "plain").exists()
