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


def _experts_folder(tmp_path) -> tuple:
    """3 experts of 4 rows and 2 groups, every byte 0x21 (FP4 0.5 then 1.0), each expert's
    exponents 127, 128, 126: expert e's values are 0.5 and 1.0 times 1, 2, 0.5."""
    blocks = np.full((3, 4, 2, 16), 0x21, np.uint8)
    scales = np.repeat(np.array([127, 128, 126], np.uint8), 8).reshape(3, 4, 2)
    folder(tmp_path / "q", [(f"{M}_blocks", U8, blocks), (f"{M}_scales", U8, scales)],
           {"quant_method": "mxfp4"})  # fmt: skip
    one = np.tile(np.array([[0.5], [1.0]], np.float32), (32, 4))  # [64 = groups·32, 4 rows]
    return tmp_path / "q", np.stack([one, one * 2, one / 2])


def test_gpt_oss_values_are_read_several_experts_at_a_time(tmp_path):
    """The default chunk holds all three experts: each is unpacked and scaled as its own."""
    from inspector.core.quant.of_checkpoint import quant_layout
    from inspector.core.quant.values import dequantized_f32

    path, want = _experts_folder(tmp_path)
    with open_checkpoint(str(path)) as ckpt:
        w = quant_layout(ckpt).weights[M]
        got = np.concatenate(list(dequantized_f32(ckpt, w)))
    assert w.shape == (3, 64, 4)
    assert got.tolist() == want.reshape(-1).tolist()


def test_gpt_oss_values_view_shows_the_expert_asked_for(tmp_path):
    from inspector.core.quant.of_checkpoint import quant_layout
    from inspector.core.value_views import value_slice

    path, want = _experts_folder(tmp_path)
    with open_checkpoint(str(path)) as ckpt:
        w = quant_layout(ckpt).weights[M]
        for e in range(3):
            s = value_slice(ckpt, w.codes, (e,), 1, 1, rows=3, cols=2, weight=w)
            assert s.values.tolist() == want[e, 1:4, 1:3].tolist(), e


def test_blocks_that_are_not_16_bytes_are_refused_when_their_values_are_read(tmp_path):
    """The values view and statistics read through the same plan as a cast: a layout gpt-oss
    does not write is refused there too, naming both shapes."""
    from inspector.core.errors import CheckpointError
    from inspector.core.quant import rows
    from inspector.core.quant.of_checkpoint import quant_layout

    tensors = [(f"{M}_blocks", U8, np.zeros((3, 48, 4, 8), np.uint8)),
               (f"{M}_scales", U8, np.zeros((3, 48, 4), np.uint8))]  # fmt: skip
    folder(tmp_path / "q", tensors, {"quant_method": "mxfp4"})
    with open_checkpoint(str(tmp_path / "q")) as ckpt:
        w = quant_layout(ckpt).weights[M]
        with pytest.raises(CheckpointError) as e:
            rows.prepare(ckpt, w)
    assert e.value.reason == (
        f"'{M}' (gpt-oss MXFP4): blocks [3, 48, 4, 8] and scales [3, 48, 4] are not gpt-oss's"
    )
