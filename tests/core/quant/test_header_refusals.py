"""A compressed-tensors weight whose header a dequantization cannot follow is refused when the
checkpoint is recognised, not only when a cast reads its companions: ``list``, ``check`` and the
window then say a cast is refused, and the cast refuses with the same line before it writes.

Before: recognising such a weight found no problem, the window and ``check`` said "a cast
dequantizes it", and only the cast itself refused."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.quant.recognise import recognise
from tests.quant_folders import (
    ct_config,
    folder,
    header_entry,
    header_fp4,
    header_packed,
    nvfp4_stacked,
)

_INT4 = {"num_bits": 4, "type": "int", "strategy": "channel"}
_INT4_GROUP = {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 32}
_NVFP4 = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}
_MXFP4 = {"num_bits": 4, "type": "float", "strategy": "group", "group_size": 32}
_FP8 = {"num_bits": 8, "type": "float", "strategy": "channel"}
_BLOCK = {"num_bits": 8, "type": "float", "strategy": "block", "block_structure": [2, 4]}


HEADERS = {
    "packed-1-dimension": ("pack-quantized", _INT4, header_packed("m", "I32", (2,), (1,)),
                           "packed codes of one dimension (compressed-tensors unpacks rows)"),
    "nvfp4-3-dimensions": ("nvfp4-pack-quantized", _NVFP4, header_fp4("m", (2, 8, 32), (2, 8, 4)),
                           "FP4 codes of 3 dimensions (compressed-tensors unpacks FP4 matrices only)"),
    "mxfp4-3-dimensions": ("mxfp4-pack-quantized", _MXFP4, header_fp4("m", (2, 8, 32), (2, 8, 2), "U8")[:2],
                           "FP4 codes of 3 dimensions (compressed-tensors unpacks FP4 matrices only)"),
    "columns-not-a-multiple-of-the-group": (  # 20 bytes hold 40 FP4 codes: 2.5 groups
        "nvfp4-pack-quantized", _NVFP4, header_fp4("m", (4, 20), (4, 3)),
        "40 columns are not a multiple of the group size 16"),
    "scale-of-another-shape": ("float-quantized", _FP8,
                               [header_entry("m.weight", "F8_E4M3", (4, 16)),
                                header_entry("m.weight_scale", "BF16", (4, 2))],
                               "scale 'm.weight_scale' is [4, 2], the weight [4, 16] with "
                               "per channel needs [4, 1]"),
    "nvfp4-without-global-scale": ("nvfp4-pack-quantized", _NVFP4, header_fp4("m")[:2],
                                   "NVFP4 needs one F32 weight_global_scale"),
    "nvfp4-scales-as-integers": ("nvfp4-pack-quantized", _NVFP4, header_fp4("m", scale_dtype="I8"),
                                 "NVFP4 scales are I8"),
    "scales-as-integers": ("float-quantized", _FP8,
                           [header_entry("m.weight", "F8_E4M3", (4, 16)),
                            header_entry("m.weight_scale", "I32", (4, 1))], "scales are I32"),
    "packed-without-weight-shape": ("pack-quantized", _INT4, header_packed("m")[:2],
                                    "packed codes without weight_shape"),
    "packed-zero-points-not-i32": (
        "pack-quantized", {**_INT4, "symmetric": False},
        [*header_packed("m"), header_entry("m.weight_zero_point", "I8", (4, 1))],
        "packed zero points are not I32 [rows, groups]"),
    "packed-zero-points-of-too-few-words": (  # found by a fuzz: an IndexError, not a line
        "pack-quantized", {**_INT4, "num_bits": 8, "symmetric": False},
        [*header_packed("m", "I32", (16, 16), (16, 1)), header_entry("m.weight_zero_point", "I32", (3, 1))],
        "packed zero point 'm.weight_zero_point' holds 3 words a column; 16 rows of int8 need 4"),
    "packed-zero-points-one-word-short": (  # 33 rows of int4: 132 bits, 5 words (not 132 // 33)
        "pack-quantized", {**_INT4, "symmetric": False},
        [*header_packed("m", "I32", (33, 2), (33, 1)), header_entry("m.weight_zero_point", "I32", (4, 1))],
        "packed zero point 'm.weight_zero_point' holds 4 words a column; 33 rows of int4 need 5"),
    "zero-points-not-one-a-scale": (
        "int-quantized", {"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": False},
        [header_entry("m.weight", "I8", (4, 16)), header_entry("m.weight_scale", "BF16", (4, 1)),
         header_entry("m.weight_zero_point", "I8", (4, 2))],
        "zero point 'm.weight_zero_point' does not match its scale's shape"),
    "codes-of-no-dimension": ("float-quantized", {**_FP8, "strategy": "tensor"},
                              [header_entry("m.weight", "F8_E4M3", ()),
                               header_entry("m.weight_scale", "F32", (1,))],
                              "codes are not a plain row-major tensor"),
    "scale-transposed": ("float-quantized", _FP8,  # as many values, in the other order
                         [header_entry("m.weight", "F8_E4M3", (4, 16)),
                          header_entry("m.weight_scale", "BF16", (1, 4))],
                         "scale 'm.weight_scale' is [1, 4], the weight [4, 16] with "
                         "per channel needs [4, 1]"),
    "block-of-three-dimensions": ("float-quantized", _BLOCK,
                                  [header_entry("m.weight", "F8_E4M3", (2, 4, 8)),
                                   header_entry("m.weight_scale", "F32", (2, 1, 2))],
                                  "block scales need a 2-D weight"),
    "block-scales-of-the-other-side": ("float-quantized", _BLOCK,  # [4, 16] in 2×4: [2, 4]
                                       [header_entry("m.weight", "F8_E4M3", (4, 16)),
                                        header_entry("m.weight_scale", "F32", (1, 4))],
                                       "scale 'm.weight_scale' is [1, 4], the weight [4, 16] "
                                       "with block 2×4 needs [2, 4]"),
    "nvfp4-two-global-scales": ("nvfp4-pack-quantized", _NVFP4,
                                [*header_fp4("m")[:2],
                                 header_entry("m.weight_global_scale", "F32", (2,))],
                                "NVFP4 needs one F32 weight_global_scale"),
    "mxfp4-scales-not-exponents": ("mxfp4-pack-quantized", _MXFP4, header_fp4("m", (4, 16), (4, 1), "BF16")[:2],
                                   "MXFP4 scales are BF16, not U8 exponents"),
    "packed-words-past-the-groups": ("pack-quantized", {**_INT4_GROUP, "group_size": 8},
                                     header_packed("m", "I32", (1, 4), (1, 1)),  # one group of 8: one word
                                     "the scales say 8 columns (group 8), which fill 1 word "
                                     "of int4 a row; the packed codes hold 4 (32 columns)"),
    "packed-words-past-the-groups-of-stacked-experts": (  # the columns are the last dimension
        "pack-quantized", _INT4_GROUP, header_packed("m", "I32", (2, 4, 5), (2, 4, 2)),
        "the scales say 64 columns (group 32), which fill 8 words of int4 a row; the packed "
        "codes hold 5 (40 columns)"),
    "float-codes-as-integers": ("float-quantized", _FP8,
                                [header_entry("m.weight", "I8", (4, 16)),
                                 header_entry("m.weight_scale", "BF16", (4, 1))],
                                "codes are I8, float-quantized stores F8_E4M3/F8_E5M2"),
    "nine-bit-packing": ("pack-quantized", {**_INT4, "num_bits": 9}, header_packed("m", "I32", (4, 9), (4, 1)),
                         "9-bit packing (compressed-tensors packs 1 to 8 bits)"),
}  # fmt: skip


@pytest.mark.parametrize(("fmt", "weights", "tensors", "why"), HEADERS.values(), ids=HEADERS)
def test_a_header_a_dequantization_cannot_follow_is_a_problem(fmt, weights, tensors, why):
    layout = recognise(tensors, ct_config(fmt, weights))
    assert layout is not None and list(layout.weights) == ["m.weight"]
    label = layout.weights["m.weight"].scheme.label
    assert layout.problems == [f"'m.weight' ({label}): {why}"]
    assert layout.cast_refusal() == layout.problems[0]
    assert layout.to_json()["dequantizable"] is False


@pytest.mark.parametrize(
    ("fmt", "weights", "tensors"),
    [("nvfp4-pack-quantized", _NVFP4, header_fp4("m")),
     ("pack-quantized", _INT4, header_packed("m")),
     ("pack-quantized", _INT4_GROUP, header_packed("m", "I32", (4, 8), (4, 2))),
     ("pack-quantized", {**_INT4, "symmetric": False},
      [*header_packed("m"), header_entry("m.weight_zero_point", "I32", (1, 1))]),
     ("float-quantized", {**_FP8, "strategy": "tensor"},
      [header_entry("m.weight", "F8_E4M3", (4, 16)), header_entry("m.weight_scale", "F32", ())]),
     *[("nvfp4-pack-quantized", _NVFP4, header_fp4("m", scale_dtype=dt)) for dt in ("BF16", "F16", "F32")],
     ("mxfp4-pack-quantized", _MXFP4, header_fp4("m", (4, 16), (4, 1), "U8")[:2]),
     ("float-quantized", _FP8, [header_entry("m.weight", "F8_E5M2", (4, 16)),
                                header_entry("m.weight_scale", "F16", (4, 1))]),
     ("float-quantized", _BLOCK, [header_entry("m.weight", "F8_E4M3", (4, 16)),
                                  header_entry("m.weight_scale", "F32", (2, 4))]),
     *[("pack-quantized", {**_INT4, "num_bits": bits}, header_packed("m")) for bits in (1, 8)]],
    ids=["nvfp4", "pack-channel", "pack-group", "pack-asymmetric", "fp8-tensor", "nvfp4-bf16-scales",
         "nvfp4-f16-scales", "nvfp4-f32-scales", "mxfp4", "e5m2-f16-scales", "block-2x4",
         "pack-1-bit", "pack-8-bits"],
)  # fmt: skip
def test_headers_that_fit_are_no_problem(fmt, weights, tensors):
    layout = recognise(tensors, ct_config(fmt, weights))
    assert layout is not None and list(layout.weights) == ["m.weight"]
    assert layout.problems == [] and layout.cast_refusal() is None


CAST = {
    "nvfp4-3-dimensions": nvfp4_stacked(),
    "packed-zero-points-of-too-few-words": ([  # before: an IndexError out of the cast
        ("m.weight_packed", DTYPES["I32"], np.zeros((16, 16), np.int32)),
        ("m.weight_scale", DTYPES["F32"], np.ones((16, 1), np.float32)),
        ("m.weight_shape", DTYPES["I64"], np.array([16, 64], np.int64)),
        ("m.weight_zero_point", DTYPES["I32"], np.zeros((3, 1), np.int32)),
    ], ct_config("pack-quantized", {**_INT4, "num_bits": 8, "symmetric": False})),
}  # fmt: skip


@pytest.mark.parametrize(("tensors", "qc"), CAST.values(), ids=CAST)
def test_the_cast_refuses_with_the_line_recognition_gave(tmp_path, tensors, qc):
    path = folder(tmp_path / "q", tensors, qc)
    header = recognise([header_entry(n, d.name, a.shape) for n, d, a in tensors], qc)
    assert header is not None
    out = tmp_path / "out.safetensors"
    with open_checkpoint(str(path)) as ckpt, pytest.raises(CheckpointError) as e:
        run_job(cast_checkpoint(ckpt, DTYPES["F32"], out))
    assert header.problems[0] in str(e.value)
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["q"]


@pytest.mark.parametrize(
    ("codes", "scale", "why"),
    [("F8_E4M3", "F32", None), ("F8_E5M2", "F32", None),
     ("F8_E4M3", "BF16", "weight_scale_inv is BF16, not F32"), ("I8", "F32", "codes are I8, not FP8")],
)  # fmt: skip
def test_fp8_block_weights_take_either_fp8_and_f32_scales(codes, scale, why):
    """``fp8_block`` words these as layout problems first; the check the cast runs itself
    (``header_refusal``, through ``rows.prepare``) holds the same rule."""
    from inspector.core.quant.header_checks import header_refusal
    from inspector.core.quant.layout import Part, QuantizedWeight, WeightArgs
    from inspector.core.quant.schemes import QuantScheme

    w = QuantizedWeight("m.weight", QuantScheme.FP8_BLOCK, header_entry("m.weight", codes, (4, 8)),
                        (4, 8), {Part.SCALE: header_entry("m.weight_scale_inv", scale, (1, 1))},
                        WeightArgs(8, "float", "block", block=(128, 128)))  # fmt: skip
    assert header_refusal(w) == why
