"""A quantized checkpoint a cast cannot dequantize exactly is refused with one line naming the
scheme, before anything is written: never a raw cast of codes or scales."""

from __future__ import annotations

import os
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.quant.recognise import recognise
from inspector.core.save.writer import save_arrays
from tests.quant_folders import (
    BF16,
    F8,
    F32,
    bnb4_tensors,
    ct_config,
    deepseek_folder,
    folder,
    gpt_oss_tensors,
    gptq_tensors,
)

BNB = "model.layers.0.mlp.up_proj"


def _refused(path: Path, out: Path) -> str:
    with open_checkpoint(str(path)) as ckpt, pytest.raises(CheckpointError) as e:
        run_job(cast_checkpoint(ckpt, DTYPES["BF16"], str(out)))
    assert not out.exists()
    assert not [n for n in os.listdir(out.parent) if n.endswith(".partial")]
    line = str(e.value)
    assert "\n" not in line
    return line


@pytest.mark.parametrize(
    ("method", "tensors", "named"),
    [
        (
            {"quant_method": "awq", "bits": 4, "group_size": 32, "version": "gemv"},
            gptq_tensors(),
            "AWQ version 'gemv'",
        ),
        ({"quant_method": "hqq"}, gptq_tensors(), "'hqq'"),
    ],
)
def test_schemes_we_cannot_dequantize_are_refused_by_name(tmp_path, method, tensors, named):
    line = _refused(folder(tmp_path / "q", tensors, method), tmp_path / "out")
    assert named in line and "refused" in line


def test_bitsandbytes_without_a_readable_quant_state_is_refused(tmp_path):
    qc = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}
    line = _refused(folder(tmp_path / "q", bnb4_tensors(), qc), tmp_path / "out")
    assert (
        "bitsandbytes 4-bit" in line and "quant_state is not the JSON bitsandbytes writes" in line
    )


def test_quantized_names_without_a_config_are_refused_as_a_guess(tmp_path):
    deepseek_folder(tmp_path / "q")
    (tmp_path / "q" / "config.json").unlink()
    line = _refused(tmp_path / "q", tmp_path / "out")
    assert "looks like FP8 block-scaled" in line and "no config.json" in line


def _norm_scales() -> tuple:  # a plain tensor whose name ends as gpt-oss's scales end
    return ("model.norm_scales", BF16, np.ones(8, ml_dtypes.bfloat16))


GUESSES = {
    # GPTQ and AWQ store the same names: the scheme is named as both, a cast refuses to choose
    "gptq-or-awq": (gptq_tensors, "GPTQ or AWQ"),
    "gpt-oss": (gpt_oss_tensors, "gpt-oss MXFP4 (quant_method mxfp4)"),
    "bitsandbytes-beside-a-scales-name": (lambda: [*bnb4_tensors(), _norm_scales()],
                                          "bitsandbytes 4-bit"),
    "llm-int8": (lambda: [("m.weight", DTYPES["I8"], np.ones((4, 8), np.int8)),
                          ("m.SCB", F32, np.ones(4, np.float32))], "bitsandbytes 8-bit"),
}  # fmt: skip


@pytest.mark.parametrize(("made", "scheme"), GUESSES.values(), ids=GUESSES)
def test_names_of_a_scheme_without_a_config_are_refused_as_a_guess(tmp_path, made, scheme):
    save_arrays(tmp_path / "m.safetensors", made())
    with open_checkpoint(str(tmp_path / "m.safetensors")) as ckpt:
        layout = recognise(ckpt.tensors, None)
    assert layout is not None and layout.to_json()["confirmed"] is False
    n = len(layout.weights)
    assert n >= 1 and layout.describe() == (
        f"looks like {scheme}: {n} quantized weight{'s' * (n != 1)}, no config.json to confirm"
    )
    line = _refused(tmp_path / "m.safetensors", tmp_path / "out.safetensors")
    assert line.endswith(
        f"looks like {scheme} but there is no config.json quantization_config to confirm the "
        "scheme; a cast would write the codes unscaled, so it is refused"
    )


@pytest.mark.parametrize(
    ("scale_shape", "why"),
    [((2, 1), "needs F32 [2, 2]"), ((4, 4), "needs F32 [2, 2]")],
)
def test_scales_that_do_not_fit_the_blocks_are_refused(tmp_path, scale_shape, why):
    codes = np.zeros((256, 256), ml_dtypes.float8_e4m3fn)
    tensors = [
        ("m.weight", F8, codes),
        ("m.weight_scale_inv", F32, np.ones(scale_shape, np.float32)),
    ]
    qc = {"quant_method": "fp8", "weight_block_size": [128, 128]}
    assert why in _refused(folder(tmp_path / "q", tensors, qc), tmp_path / "out")


def test_an_fp8_weight_without_its_scale_is_refused(tmp_path):
    deepseek_folder(tmp_path / "q")
    with open_checkpoint(str(tmp_path / "q")) as ckpt:
        kept = [(t.name, t.dtype, np.array(ckpt.view(t))) for t in ckpt.tensors]
    kept.append(
        ("model.layers.1.mlp.up_proj.weight", F8, np.zeros((4, 4), ml_dtypes.float8_e4m3fn))
    )
    save_arrays(tmp_path / "q" / "model.safetensors", kept)
    assert "has no weight_scale_inv" in _refused(tmp_path / "q", tmp_path / "out")


@pytest.mark.parametrize(
    "qc",
    [
        {
            "quant_method": "compressed-tensors",
            "format": "marlin-24",
            "config_groups": {
                "g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int"}}
            },
        },
        {"quant_method": "compressed-tensors", "format": "float-quantized"},
        {"quant_method": "fp8", "weight_block_size": [128, 0]},
        {"quant_method": "fp8", "weight_block_size": "128"},
    ],
    ids=["unknown-format", "no-groups", "zero-block", "text-block"],
)
def test_a_config_we_cannot_follow_is_one_line_and_nothing_written(tmp_path, qc):
    tensors = [
        ("m.weight", F8, np.zeros((4, 4), ml_dtypes.float8_e4m3fn)),
        ("m.weight_scale", BF16, np.ones((4, 1), ml_dtypes.bfloat16)),
        ("m.weight_scale_inv", F32, np.ones((1, 1), np.float32)),
    ]
    line = _refused(folder(tmp_path / "q", tensors, qc), tmp_path / "out")
    assert "quantization_config" in line or "format" in line


def test_a_weight_shape_that_disagrees_with_the_packed_codes_is_refused(tmp_path):
    qc = {"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {
        "g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
                                                 "strategy": "channel"}}}}  # fmt: skip
    tensors = [
        ("m.weight_packed", DTYPES["I32"], np.zeros((8, 2), np.int32)),
        ("m.weight_scale", BF16, np.ones((8, 1), ml_dtypes.bfloat16)),
        ("m.weight_shape", DTYPES["I64"], np.array([8, 40], np.int64)),  # 2 words hold 16
    ]
    line = _refused(folder(tmp_path / "q", tensors, qc), tmp_path / "out")
    assert "weight_shape [8, 40]" in line


def test_plain_checkpoints_are_not_taken_for_quantized_ones(tmp_path):
    from inspector.core.layout import TensorInfo

    names = ["encoder.blocks.0.weight", "decoder_blocks", "decoder_scales", "attn.qkv.weight",
             "head.weight_scale", "conv.qweight_norm", "x.SCB_y", "p.qweight", "p.scales",
             "b.weight", "b.weight.absmax", "c.weight", "c.SCB", "d.weight_packed",
             "e.weight", "e.weight_scale_inv"]  # fmt: skip
    tensors = [TensorInfo("F32", (4, 4), (0, 64), n, "f") for n in names]
    assert recognise(tensors, None) is None


def test_columns_that_are_not_a_multiple_of_the_group_are_refused(tmp_path):
    """compressed-tensors' own decompressor raises on such a weight: nothing to be exact to."""
    qc = {"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {
        "g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
                                                 "strategy": "group", "group_size": 32}}}}  # fmt: skip
    tensors = [  # 8 words hold 60 columns as they hold the 2 groups' 64: only weight_shape tells
        ("m.weight_packed", DTYPES["I32"], np.zeros((8, 8), np.int32)),
        ("m.weight_scale", BF16, np.ones((8, 2), ml_dtypes.bfloat16)),
        ("m.weight_shape", DTYPES["I64"], np.array([8, 60], np.int64)),
    ]
    line = _refused(folder(tmp_path / "q", tensors, qc), tmp_path / "out")
    assert "60 columns are not a multiple of the group size 32" in line


@pytest.mark.parametrize(
    ("qc", "tensors", "why"),
    [
        ("fp8", [("m.weight", F8, np.zeros((4, 4), ml_dtypes.float8_e4m3fn))],
         "quantization_config is str 'fp8', not an object"),
        ({"quant_method": "gptq", "bits": "4"}, gptq_tensors(), "GPTQ quantization_config bits is '4'"),
        ({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {
            "g": {"targets": ["Linear"], "weights": {"num_bits": 16, "type": "int",
                                                     "strategy": "channel"}}}},
         [("m.weight_packed", DTYPES["I32"], np.zeros((4, 1), np.int32)),
          ("m.weight_scale", BF16, np.ones((4, 1), ml_dtypes.bfloat16)),
          ("m.weight_shape", DTYPES["I64"], np.array([4, 2], np.int64))],
         "16-bit packing (compressed-tensors packs 1 to 8 bits)"),
        ({"quant_method": "bitsandbytes", "load_in_4bit": True},
         [("m.weight", DTYPES["U8"], np.zeros((8, 1), np.uint8)),
          ("m.weight.absmax", F32, np.ones(1, np.float32)),
          ("m.weight.quant_map", F32, np.zeros(16, np.float32)),
          ("m.weight.quant_state.bitsandbytes__nf4", DTYPES["U8"],
           np.frombuffer(b"[" * 5000 + b"]" * 5000, np.uint8))],
         "quant_state is not the JSON bitsandbytes writes"),
    ],
    ids=["config-not-an-object", "gptq-bits-text", "ct-16-bit-packing", "bnb-deep-json"],
)  # fmt: skip
def test_configs_and_states_found_by_a_hostile_sweep_are_one_line(tmp_path, qc, tensors, why):
    """Before: a text quantization_config cast the FP8 codes as values (exit 0), bits "4" was
    read as 4, 16-bit packing was unpacked where compressed-tensors refuses, and a deeply
    nested quant state raised RecursionError (a traceback)."""
    assert why in _refused(folder(tmp_path / "q", tensors, qc), tmp_path / "out")


_F8_CHANNEL = {"num_bits": 8, "type": "float", "strategy": "channel"}
_PACK4 = {"num_bits": 4, "type": "int", "strategy": "channel"}


@pytest.mark.parametrize(
    ("qc", "tensors", "why"),
    [
        ({"quant_method": "fp8", "weight_block_size": [128, 128]},
         [("m.weight_packed", DTYPES["I32"], np.zeros((4, 1), np.int32)),
          ("m.weight_scale", BF16, np.ones((4, 1), ml_dtypes.bfloat16))],
         "'m.weight_packed' (I32) is stored as quantized codes"),
        (ct_config("float-quantized", _F8_CHANNEL),
         [("a.weight", F8, np.zeros((4, 4), ml_dtypes.float8_e4m3fn)),
          ("a.weight_scale", BF16, np.ones((4, 1), ml_dtypes.bfloat16)),
          ("b.weight", F8, np.ones((4, 4), ml_dtypes.float8_e4m3fn))],
         "'b.weight' (F8_E4M3) is stored as quantized codes"),
        (ct_config("pack-quantized", _PACK4),
         [("m.weight_packed", DTYPES["I32"], np.zeros((16, 13), np.int32)),
          ("m.weight_scale", BF16, np.ones((16, 1), ml_dtypes.bfloat16))],
         "packed codes without weight_shape"),
        (ct_config("float-quantized", _F8_CHANNEL, transform_config={"quip": {"type": "hadamard"}}),
         [("a.weight", F8, np.zeros((4, 4), ml_dtypes.float8_e4m3fn)),
          ("a.weight_scale", BF16, np.ones((4, 1), ml_dtypes.bfloat16))],
         "has a transform_config"),
    ],
    ids=["method-names-another-scheme", "codes-without-scale", "pack-without-shape", "quip"],
)  # fmt: skip
def test_what_the_hostile_review_cast_with_exit_0_is_refused(tmp_path, qc, tensors, why):
    """An independent review found these written as plain models: codes of another scheme or
    without their scale cast as values, a [16, 100] weight written [16, 104] with padding
    values, and QuIP-rotated weights written in the rotated basis."""
    assert why in _refused(folder(tmp_path / "q", tensors, qc), tmp_path / "out")


def test_naive_quantized_fp8_and_class_targets_and_empty_weights_dequantize(tmp_path):
    """Wrongly refused before: llm-compressor's FP8 weight-only output (format naive-quantized),
    a group whose class target (Embedding) matches nothing listed before the Linear group, and
    a weight with 0 rows (a ValueError)."""
    from safetensors.numpy import load_file

    qc = {"quant_method": "compressed-tensors", "format": "naive-quantized", "config_groups": {
        "a": {"targets": ["Embedding"], "weights": {"num_bits": 8, "type": "int",
                                                     "strategy": "channel"}},
        "b": {"targets": ["Linear"], "weights": _F8_CHANNEL}}}  # fmt: skip
    codes = np.array([[1, 2], [4, -8]], np.float32).astype(ml_dtypes.float8_e4m3fn)
    tensors = [
        ("m.weight", F8, codes),
        ("m.weight_scale", F32, np.array([[0.5], [0.25]], np.float32)),
        ("e.weight", F8, np.zeros((0, 4), ml_dtypes.float8_e4m3fn)),
        ("e.weight_scale", F32, np.zeros((0, 1), np.float32)),
    ]
    folder(tmp_path / "q", tensors, qc)
    with open_checkpoint(str(tmp_path / "q")) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F32"], str(tmp_path / "out")))
    got = load_file(tmp_path / "out" / "model.safetensors")
    assert got["m.weight"].tolist() == [[0.5, 1.0], [1.0, -2.0]]
    assert got["e.weight"].shape == (0, 4)
