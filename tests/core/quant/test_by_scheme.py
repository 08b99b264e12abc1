"""Each scheme's tensors as its ``quantization_config`` describes them (header only): which
stored tensors make which logical weight, the arguments its codes are read with, what the
listing shows of it, and each mismatch as its exact problem line. No torch: the folders are
written with our own safetensors writer."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.quant.layout import QuantLayout, WeightArgs
from inspector.core.quant.of_checkpoint import quant_layout
from tests.quant_folders import BF16, F8, F16, F32, I32, U8, folder, gptq_tensors

M = "model.layers.0.mlp.up_proj"


def _layout(path: Path, tensors: list, qc: object | None) -> QuantLayout:
    folder(path, tensors, qc)
    with open_checkpoint(str(path)) as ckpt:
        layout = quant_layout(ckpt)
    assert layout is not None
    return layout


def _f8(shape: tuple[int, ...], value: float = 1.0) -> np.ndarray:
    return np.full(shape, value, ml_dtypes.float8_e4m3fn)


# -- transformers / DeepSeek fp8 -------------------------------------------------------------------


def test_fp8_blocks_that_are_not_square_are_read_as_rows_by_columns(tmp_path):
    """weight_block_size [64, 128]: 64 rows by 128 columns a scale, so a [128, 256] weight takes
    [2, 2] scales; its activation scales are companions, not weights."""
    tensors = [
        (f"{M}.weight", F8, _f8((128, 256))),
        (f"{M}.weight_scale_inv", F32, np.ones((2, 2), np.float32)),
        (f"{M}.input_scale", F32, np.ones(1, np.float32)),
        (f"{M}.activation_scale", F32, np.ones(1, np.float32)),
    ]
    layout = _layout(
        tmp_path / "q", tensors, {"quant_method": "fp8", "weight_block_size": [64, 128]}
    )
    assert layout.problems == [] and layout.cast_refusal() is None
    w = layout.weights[f"{M}.weight"]
    assert w.args == WeightArgs(8, "float", "block", block=(64, 128))
    assert w.storage() == "F8_E4M3, block 64×128, scales F32"
    assert w.to_json() == {
        "scheme": "fp8",
        "storage_dtype": "F8_E4M3",
        "block": [64, 128],
        "companions": [f"{M}.weight_scale_inv", f"{M}.input_scale", f"{M}.activation_scale"],
    }
    assert layout.to_json() == {
        "scheme": "FP8 block-scaled (quant_method fp8)",
        "confirmed": True,
        "weights": 1,
        "problems": [],
        "dequantizable": True,
    }
    assert layout.describe() == "FP8 block-scaled (quant_method fp8): 1 quantized weight"


def test_fp8_blocks_one_row_high_are_a_valid_block_size(tmp_path):
    """A block size of 1 is a size (any positive integer is): [1, 128] is read, not refused."""
    tensors = [
        (f"{M}.weight", F8, _f8((4, 256))),
        (f"{M}.weight_scale_inv", F32, np.ones((4, 2), np.float32)),
    ]
    layout = _layout(
        tmp_path / "q", tensors, {"quant_method": "fp8", "weight_block_size": [1, 128]}
    )
    assert layout.unsupported is None and layout.problems == []
    assert layout.weights[f"{M}.weight"].args == WeightArgs(8, "float", "block", block=(1, 128))


def test_fp8_per_tensor_takes_one_scale_even_a_scalar_and_casts_to_codes_times_it(tmp_path):
    """No weight_block_size: one scale for the weight, stored as [1] or as a scalar []; the
    cast writes each code times it, in F32."""
    from inspector.core.cast.job import cast_checkpoint

    codes = np.array([[1.0, -2.0, 0.5, 448.0], [0.0, 3.0, -0.25, 6.0]], np.float32)
    tensors = [
        (f"{M}.weight", F8, codes.astype(ml_dtypes.float8_e4m3fn)),
        (f"{M}.weight_scale_inv", F32, np.array(0.375, np.float32)),
    ]
    layout = _layout(tmp_path / "q", tensors, {"quant_method": "fp8"})
    assert layout.problems == [] and layout.cast_refusal() is None
    w = layout.weights[f"{M}.weight"]
    assert w.args == WeightArgs(8, "float", "tensor")
    assert w.storage() == "F8_E4M3, per tensor, scales F32"
    with open_checkpoint(str(tmp_path / "q")) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F32"], str(tmp_path / "plain")))
    with open_checkpoint(str(tmp_path / "plain")) as out:
        got = np.array(out.view(f"{M}.weight"))
    assert got.tobytes() == (codes * np.float32(0.375)).tobytes()


def test_fp8_per_tensor_scale_of_two_values_is_a_problem_saying_one_is_needed(tmp_path):
    """Without blocks the weight takes one scale: two are a problem line saying so."""
    tensors = [
        (f"{M}.weight", F8, _f8((4, 4))),
        (f"{M}.weight_scale_inv", F32, np.ones(2, np.float32)),
    ]
    layout = _layout(tmp_path / "q", tensors, {"quant_method": "fp8"})
    assert layout.problems == [
        f"scale '{M}.weight_scale_inv' is F32 [2]; weight [4, 4] with blocks [] needs F32 [1]"
    ]


def test_fp8_block_scales_of_one_value_do_not_pass_for_a_per_tensor_scale(tmp_path):
    """A [256, 256] weight in 128×128 blocks needs [2, 2] scales: [1, 1] is wrong even though a
    per-tensor weight may take a single value in any shape."""
    tensors = [
        (f"{M}.weight", F8, _f8((256, 256))),
        (f"{M}.weight_scale_inv", F32, np.ones((1, 1), np.float32)),
    ]
    layout = _layout(
        tmp_path / "q", tensors, {"quant_method": "fp8", "weight_block_size": [128, 128]}
    )
    assert layout.problems == [
        f"scale '{M}.weight_scale_inv' is F32 [1, 1]; weight [256, 256] with blocks [128, 128] "
        "needs F32 [2, 2]"
    ]


def test_fp8_weight_named_by_modules_to_not_convert_is_a_problem(tmp_path):
    """transformers leaves such a module unquantized: F8 codes there contradict the config."""
    tensors = [
        (f"{M}.weight", F8, _f8((4, 4))),
        (f"{M}.weight_scale_inv", F32, np.ones(1, np.float32)),
    ]
    qc = {"quant_method": "fp8", "modules_to_not_convert": ["mlp.up_proj"]}
    layout = _layout(tmp_path / "q", tensors, qc)
    assert layout.problems == [f"'{M}.weight' is quantized but modules_to_not_convert names it"]


# -- gpt-oss MXFP4 ---------------------------------------------------------------------------------


def test_gpt_oss_experts_are_listed_with_their_fp4_groups_of_32(tmp_path):
    """Only U8 blocks with U8 scales are codes; a lone ``_blocks``, F32 scales and names before
    them do not stop the others being found; blocks that are not 4-D are a problem line."""
    e = f"{M.removesuffix('.up_proj')}.experts.gate_up_proj"
    tensors = [
        ("model.norm.weight", BF16, np.ones(4, ml_dtypes.bfloat16)),
        ("a_blocks", U8, np.zeros((4, 16), np.uint8)),  # 2-D: read, but not gpt-oss's layout
        ("a_scales", U8, np.zeros(4, np.uint8)),
        ("b_blocks", U8, np.zeros((2, 4, 1, 16), np.uint8)),
        ("b_scales", F32, np.zeros((2, 4, 1), np.float32)),  # not exponents: a plain tensor
        ("c_blocks", U8, np.zeros((2, 4, 1, 16), np.uint8)),  # no c_scales
        (f"{e}_blocks", U8, np.zeros((2, 4, 3, 16), np.uint8)),
        (f"{e}_scales", U8, np.full((2, 4, 3), 127, np.uint8)),
    ]
    layout = _layout(tmp_path / "q", tensors, {"quant_method": "mxfp4"})
    assert layout.scheme_text == "gpt-oss MXFP4 (quant_method mxfp4)"
    assert sorted(layout.weights) == ["a", e]
    w = layout.weights[e]
    assert w.shape == (2, 96, 4)
    assert w.args == WeightArgs(4, "float", "group", group_size=32)
    assert w.storage() == "FP4 E2M1 pairs in U8, group 32, scales U8"
    assert w.to_json() == {
        "scheme": "mxfp4",
        "storage_dtype": "U8",
        "group": 32,
        "companions": [f"{e}_scales"],
    }
    assert layout.weights["a"].shape == (128,)
    assert layout.problems[0] == (
        "'a_blocks' [4, 16] with scales [4]: gpt-oss stores [experts, rows, groups, 16] with "
        "scales [experts, rows, groups]"
    )


# -- GPTQ / AWQ ------------------------------------------------------------------------------------


@pytest.mark.parametrize("bits", [2, 8])
def test_gptq_bits_2_and_8_are_read(tmp_path, bits):
    """The ends of the widths GPTQ packs (2, 3, 4, 8 bits) are read, not refused."""
    layout = _layout(tmp_path / "q", gptq_tensors(), {"quant_method": "gptq", "bits": bits})
    assert layout.unsupported is None
    assert layout.weights[f"{M}.weight"].args.num_bits == bits


@pytest.mark.parametrize(("bits", "shown"), [(5, "5"), (4.0, "4.0"), (True, "True")])
def test_gptq_bits_that_are_not_2_3_4_or_8_are_refused_by_value(tmp_path, bits, shown):
    """5 bits, a float 4.0 and a bool are not widths GPTQ packs: refused, the value shown."""
    layout = _layout(tmp_path / "q", gptq_tensors(), {"quant_method": "gptq", "bits": bits})
    assert layout.unsupported == f"GPTQ quantization_config bits is {shown}"


@pytest.mark.parametrize(
    ("extra", "args"),
    [
        ({"group_size": 32, "sym": False, "checkpoint_format": "gptq_v2"},
         WeightArgs(4, "int", "group", group_size=32, symmetric=False, variant="gptq_v2")),
        ({}, WeightArgs(4, "int", "group")),  # no group_size, sym left out: symmetric
        ({"group_size": -1, "sym": True}, WeightArgs(4, "int", "group")),  # -1: per channel
        ({"group_size": 1}, WeightArgs(4, "int", "group", group_size=1)),
        ({"group_size": "32", "checkpoint_format": 2}, WeightArgs(4, "int", "group")),
    ],
    ids=["v2-asym", "defaults", "per-channel", "group-1", "not-numbers"],
)  # fmt: skip
def test_gptq_weight_args_come_from_the_config(tmp_path, extra, args):
    """group_size -1 (per channel) and values that are not integers mean no group; sym and a
    checkpoint_format string are kept; a missing sym is symmetric."""
    qc = {"quant_method": "gptq", "bits": 4, **extra}
    layout = _layout(tmp_path / "q", gptq_tensors(), qc)
    w = layout.weights[f"{M}.weight"]
    assert w.args == args
    assert w.shape == (64, 128)


def test_gptq_is_listed_with_its_packing_and_group(tmp_path):
    """What list shows and --json writes of a GPTQ weight: its packing, group and companions."""
    qc = {"quant_method": "gptq", "bits": 4, "group_size": 32}
    w = _layout(tmp_path / "q", gptq_tensors(), qc).weights[f"{M}.weight"]
    assert w.storage() == "int4 packed in I32, group 32, scales F16"
    assert w.to_json() == {
        "scheme": "gptq",
        "storage_dtype": "I32",
        "group": 32,
        "companions": [f"{M}.scales", f"{M}.qzeros", f"{M}.g_idx"],
    }


def test_awq_without_a_version_is_gemm_and_dequantizable(tmp_path):
    """AutoAWQ's default version is gemm: a config without one is read, not refused."""
    rng = np.random.default_rng(1)
    tensors = [
        (f"{M}.qweight", I32, rng.integers(0, 2**31, (64, 16), dtype=np.int32)),
        (f"{M}.qzeros", I32, rng.integers(0, 2**31, (2, 16), dtype=np.int32)),
        (f"{M}.scales", F16, np.ones((2, 128), np.float16)),
    ]
    layout = _layout(tmp_path / "q", tensors, {"quant_method": "awq", "bits": 4, "group_size": 32})
    assert layout.unsupported is None and layout.cast_refusal() is None
    assert layout.weights[f"{M}.weight"].shape == (128, 64)


def test_gptq_tensors_that_are_not_packed_codes_with_scales_are_not_weights(tmp_path):
    """A qweight without 2-D scales, or not I32, is no weight (a problem line says so when it
    looks like codes), and does not stop the weights after it being found."""
    q = gptq_tensors()
    tensors = [
        ("a.weight", BF16, np.ones((2, 2), ml_dtypes.bfloat16)),
        ("b.qweight", U8, np.zeros((4, 4), np.uint8)),  # not int32 words
        ("b.scales", F16, np.ones((1, 4), np.float16)),
        ("c.qweight", I32, np.zeros((4, 4), np.int32)),  # no scales
        ("d.qweight", I32, np.zeros((4, 4), np.int32)),
        ("d.scales", F16, np.ones(4, np.float16)),  # 1-D
        *q,
    ]
    layout = _layout(tmp_path / "q", tensors, {"quant_method": "gptq", "bits": 4, "group_size": 32})
    assert list(layout.weights) == [f"{M}.weight"]


# -- bitsandbytes ----------------------------------------------------------------------------------


def test_bitsandbytes_4bit_and_8bit_modules_each_keep_their_own_parts(tmp_path):
    """Two 4-bit modules and an 8-bit one in one checkpoint: each 4-bit weight's companions are
    its own (never the other module's quant_state), its shape before the quant_state is read is
    two values a code byte, the 8-bit weight takes its weight_format along, and the summary
    names both schemes."""
    from tests.quant_folders import I8, bnb4_tensors

    a, b, c = (
        "model.layers.0.mlp.up_proj",
        "model.layers.1.mlp.down_proj",
        "model.layers.2.mlp.gate_proj",
    )
    tensors = bnb4_tensors(a) + bnb4_tensors(b)
    tensors += [(f"{c}.weight", I8, np.ones((4, 8), np.int8)), (f"{c}.SCB", F32, np.ones(4, np.float32)),
                (f"{c}.weight_format", U8, np.zeros(1, np.uint8))]  # fmt: skip
    layout = _layout(
        tmp_path / "q", tensors, {"quant_method": "bitsandbytes", "load_in_4bit": True}
    )
    assert layout.scheme_text == "bitsandbytes 4-bit/bitsandbytes 8-bit"
    assert layout.describe() == "bitsandbytes 4-bit/bitsandbytes 8-bit: 3 quantized weights"
    for m in (a, b):
        w = layout.weights[f"{m}.weight"]
        assert w.shape == (8192,)  # 4,096 code bytes
        assert [t.name for t in w.others] == [f"{m}.weight.quant_map",
                                              f"{m}.weight.quant_state.bitsandbytes__nf4"]  # fmt: skip
    w8 = layout.weights[f"{c}.weight"]
    assert w8.shape == (4, 8) and [t.name for t in w8.others] == [f"{c}.weight_format"]
    assert layout.part_of[f"{c}.weight_format"] == f"{c}.weight"


def test_a_bitsandbytes_config_over_plain_tensors_says_bitsandbytes_with_no_weights(tmp_path):
    """config.json says bitsandbytes but no tensor is quantized: the summary still names the
    method the config gives, with 0 quantized weights."""
    tensors = [(f"{M}.weight", F32, np.ones((4, 8), np.float32))]
    layout = _layout(
        tmp_path / "q", tensors, {"quant_method": "bitsandbytes", "load_in_4bit": True}
    )
    assert layout.describe() == "bitsandbytes: 0 quantized weights"
    assert layout.to_json()["scheme"] == "bitsandbytes"
