"""A quantized checkpoint without a config.json: the scheme guessed from the tensors' names,
dtypes and shapes (header only), shown as "looks like", with the arguments a listing needs;
a cast refuses every guess. And a plain checkpoint whose names only resemble a scheme's is
not taken for one."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.quant.layout import QuantLayout, WeightArgs
from inspector.core.quant.recognise import recognise
from inspector.core.save.writer import save_arrays
from tests.quant_folders import BF16, F8, F32, I32, U8

I8 = DTYPES["I8"]
M = "model.layers.0.mlp.up_proj"


def _guess(path: Path, tensors: list) -> QuantLayout | None:
    save_arrays(path, tensors)
    with open_checkpoint(str(path)) as ckpt:
        return recognise(ckpt.tensors)


def _f8(shape: tuple[int, ...]) -> np.ndarray:
    return np.ones(shape, ml_dtypes.float8_e4m3fn)


@pytest.mark.parametrize(
    ("weight", "scale", "block"),
    [((256, 512), (2, 2), (128, 256)), ((4, 256), (4, 2), (1, 128)), ((256, 4), (2, 4), (128, 1))],
)
def test_an_fp8_block_size_is_guessed_from_the_weight_and_scale_shapes(
    tmp_path, weight, scale, block
):
    """``weight_scale_inv`` [r, c] over a weight [R, C]: blocks of ceil(R/r) × ceil(C/c), at
    least one row and column; a 2-D tensor before them is not taken for a weight and its scale."""
    tensors = [
        ("a.weight", BF16, np.ones((2, 2), ml_dtypes.bfloat16)),
        (f"{M}.weight", F8, _f8(weight)),
        (f"{M}.weight_scale_inv", F32, np.ones(scale, np.float32)),
    ]
    layout = _guess(tmp_path / "m.safetensors", tensors)
    assert layout is not None and layout.problems == []
    assert layout.weights[f"{M}.weight"].args == WeightArgs(8, "float", "block", block=block)
    assert layout.describe() == (
        "looks like FP8 block-scaled (quant_method fp8): 1 quantized weight, no config.json to "
        "confirm"
    )
    assert layout.to_json()["confirmed"] is False  # list --json: false, not null


def test_a_weight_scale_inv_without_its_weight_is_no_fp8_guess(tmp_path):
    """No ``x.weight`` beside ``x.weight_scale_inv`` (a header cut, or another naming): nothing
    to guess FP8 from, and no crash looking for the weight's dtype."""
    tensors = [
        ("a.weight", BF16, np.ones((2, 2), ml_dtypes.bfloat16)),
        (f"{M}.weight_scale_inv", F32, np.ones((1, 1), np.float32)),
    ]
    assert _guess(tmp_path / "m.safetensors", tensors) is None


def test_fp8_weights_with_weight_scale_look_like_compressed_tensors_float(tmp_path):
    tensors = [
        ("lm_head.weight", BF16, np.ones((2, 4), ml_dtypes.bfloat16)),
        (f"{M}.weight", F8, _f8((4, 4))),
        (f"{M}.weight_scale", F32, np.ones((4, 1), np.float32)),
    ]
    layout = _guess(tmp_path / "m.safetensors", tensors)
    assert layout is not None
    assert layout.to_json() == {
        "scheme": "compressed-tensors float-quantized",
        "confirmed": False,
        "weights": 1,
        "problems": [],
        "dequantizable": False,
    }
    assert layout.weights[f"{M}.weight"].args == WeightArgs(8, "float", "channel")


def test_int8_weights_with_weight_scale_look_like_compressed_tensors_int(tmp_path):
    tensors = [
        (f"{M}.weight", I8, np.ones((4, 4), np.int8)),
        (f"{M}.weight_scale", F32, np.ones((4, 1), np.float32)),
    ]
    layout = _guess(tmp_path / "m.safetensors", tensors)
    assert layout is not None and layout.scheme_text == "compressed-tensors int-quantized"
    assert list(layout.weights) == [f"{M}.weight"]


def test_a_bf16_weight_beside_a_tensor_named_weight_scale_is_plain(tmp_path):
    """Only FP8 or I8 codes make ``x.weight`` + ``x.weight_scale`` a quantized weight."""
    tensors = [
        (f"{M}.weight", BF16, np.ones((4, 4), ml_dtypes.bfloat16)),
        (f"{M}.weight_scale", F32, np.ones((4, 1), np.float32)),
    ]
    assert _guess(tmp_path / "m.safetensors", tensors) is None


def test_int32_packed_codes_look_like_pack_quantized_int4_per_channel(tmp_path):
    tensors = [
        (f"{M}.weight_packed", I32, np.zeros((8, 2), np.int32)),
        (f"{M}.weight_scale", BF16, np.ones((8, 1), ml_dtypes.bfloat16)),
    ]
    layout = _guess(tmp_path / "m.safetensors", tensors)
    assert layout is not None and layout.scheme_text == "compressed-tensors pack-quantized"
    w = layout.weights[f"{M}.weight"]
    assert w.args == WeightArgs(4, "int", "channel")
    assert w.shape == (8, 16)
    assert w.storage() == "int4 packed in I32, per channel, scales BF16"


@pytest.mark.parametrize(
    ("global_scale", "fmt", "group"),
    [(False, "mxfp4-pack-quantized", 32), (True, "nvfp4-pack-quantized", 16)],
)
def test_byte_packed_codes_look_like_fp4_with_or_without_a_global_scale(
    tmp_path, global_scale, fmt, group
):
    tensors = [
        (f"{M}.weight_packed", U8, np.zeros((8, 16), np.uint8)),
        (f"{M}.weight_scale", U8, np.ones((8, 32 // group), np.uint8)),
    ]
    if global_scale:
        tensors.append((f"{M}.weight_global_scale", F32, np.ones(1, np.float32)))
    layout = _guess(tmp_path / "m.safetensors", tensors)
    assert layout is not None and layout.scheme_text == f"compressed-tensors {fmt}"
    w = layout.weights[f"{M}.weight"]
    assert w.args == WeightArgs(4, "float", "group", group_size=group)
    assert w.shape == (8, 32)


def test_a_guess_names_its_group_when_a_weight_does_not_fit_it(tmp_path):
    """Packed codes beside FP8 codes: the guess is pack-quantized, and the FP8 weight is a
    problem line naming the guessed group."""
    tensors = [
        (f"{M}.weight_packed", I32, np.zeros((8, 2), np.int32)),
        (f"{M}.weight_scale", BF16, np.ones((8, 1), ml_dtypes.bfloat16)),
        (f"{M}.weight_shape", DTYPES["I64"], np.array([8, 16], np.int64)),
        ("model.layers.1.mlp.up_proj.weight", F8, _f8((4, 4))),
        ("model.layers.1.mlp.up_proj.weight_scale", F32, np.ones((4, 1), np.float32)),
    ]
    layout = _guess(tmp_path / "m.safetensors", tensors)
    assert layout is not None
    assert layout.problems == [
        "'model.layers.1.mlp.up_proj.weight' is stored as codes, but its group 'guess' says "
        "pack-quantized"
    ]
