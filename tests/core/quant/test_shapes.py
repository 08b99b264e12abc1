"""A pack-quantized weight's ``weight_shape``: read (a few bytes) and checked against its packed
codes before a listing or a cast uses it; each way it can disagree is one line naming it."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.quant.of_checkpoint import quant_layout
from inspector.core.quant.shapes import resolve_shapes
from tests.quant_folders import BF16, F32, I32, folder

I64 = DTYPES["I64"]
M = "m"
QC = {"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {
    "g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "channel"}}}}  # fmt: skip


def _resolved(path: Path, codes: tuple[int, ...], shape_dtype, shape: np.ndarray) -> tuple:
    rows = codes[:-1] or (1,)
    tensors = [
        (f"{M}.weight_packed", I32, np.zeros(codes, np.int32)),
        (f"{M}.weight_scale", BF16, np.ones((*rows, 1), ml_dtypes.bfloat16)),
        (f"{M}.weight_shape", shape_dtype, shape),
    ]
    folder(path, tensors, QC)
    with open_checkpoint(str(path)) as ckpt:
        layout = quant_layout(ckpt)
        assert layout is not None
        resolve_shapes(ckpt, layout)
    return layout.weights[f"{M}.weight"].shape


@pytest.mark.parametrize(
    ("codes", "shape_dtype", "shape", "want"),
    [
        ((2, 2), I32, np.array([2, 13], np.int32), (2, 13)),  # I32 as well as I64
        ((2, 20, 2), I64, np.array([2, 20, 16], np.int64), (2, 20, 16)),  # 3-D codes
        ((2, 1), I64, np.array([2, 1], np.int64), (2, 1)),  # one column
        ((2, 2), I64, np.array([[2, 9]], np.int64), (2, 9)),  # stored [1, 2]: its values
        ((1,) * 7 + (2,), I64, np.array([1] * 7 + [16], np.int64), (1,) * 7 + (16,)),  # 8-D
    ],
    ids=["i32", "3-d", "one-column", "2-d-store", "8-d"],
)
def test_a_weight_shape_that_fits_the_packed_codes_is_the_weights_shape(
    tmp_path, codes, shape_dtype, shape, want
):
    assert _resolved(tmp_path / "q", codes, shape_dtype, shape) == want


@pytest.mark.parametrize(
    ("codes", "shape_dtype", "shape", "why"),
    [
        ((2, 2), F32, np.array([2, 13], np.float32), "weight_shape 'm.weight_shape' is F32 [2]"),
        ((2, 2), I64, np.array([2, 13, 1], np.int64), "weight_shape 'm.weight_shape' is I64 [3]"),
        ((1,) * 8 + (2,), I64, np.array([1] * 8 + [16], np.int64),
         "weight_shape 'm.weight_shape' is I64 [9]"),  # more than 8 dimensions
        ((2, 0), I64, np.array([2, 0], np.int64),
         "weight_shape [2, 0] of 'm.weight' disagrees with its packed codes [2, 0] (int4)"),
        ((2, 2), I64, np.array([2, 17], np.int64),
         "weight_shape [2, 17] of 'm.weight' disagrees with its packed codes [2, 2] (int4)"),
    ],
    ids=["f32", "3-values", "9-d", "no-columns", "too-wide"],
)  # fmt: skip
def test_a_weight_shape_that_does_not_fit_is_refused_with_its_file(
    tmp_path, codes, shape_dtype, shape, why
):
    with pytest.raises(CheckpointError) as e:
        _resolved(tmp_path / "q", codes, shape_dtype, shape)
    assert e.value.reason == why
    assert e.value.path == str(tmp_path / "q" / "model.safetensors")
