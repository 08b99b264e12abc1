"""A quantization_config names a scheme; every tensor stored as codes or scales that the scheme
does not claim is a problem (a cast would write it as values), and each refusal of the config
itself says what the summary and ``list --json`` show: the scheme named, confirmed by config."""

from __future__ import annotations

import pytest

from inspector.core.quant.recognise import recognise
from tests.quant_folders import ct_config, header_entry

FP8 = {"quant_method": "fp8", "weight_block_size": [128, 128]}
CT_INT8 = ct_config("int-quantized", {"num_bits": 8, "type": "int", "strategy": "channel"})


_FP8_WEIGHT = [
    header_entry("m.weight", "F8_E4M3", (128, 128)),
    header_entry("m.weight_scale_inv", "F32", (1, 1)),
]
_INT8_WEIGHT = [
    header_entry("i.weight", "I8", (4, 16)),
    header_entry("i.weight_scale", "BF16", (4, 1)),
]


def _problem(name: str, dtype: str, scheme: str) -> str:
    return (f"{name!r} ({dtype}) is stored as quantized codes or scales that {scheme} does not "
            "describe (a missing scale, or another scheme's tensors)")  # fmt: skip


@pytest.mark.parametrize(
    ("stray", "dtype"),
    [
        ("x.qweight", "I32"), ("x.weight_packed", "U8"), ("x.ffn_blocks", "U8"),
        ("x.bias_scale_inv", "F32"), ("x.weight_scale", "BF16"),
        ("x.weight_zero_point", "I8"), ("x.qzeros", "I32"),
    ],
)  # fmt: skip
def test_each_kind_of_unclaimed_codes_or_scales_is_a_problem(stray, dtype):
    layout = recognise([*_FP8_WEIGHT, header_entry(stray, dtype)], FP8)
    assert layout is not None and list(layout.weights) == ["m.weight"]
    assert layout.problems == [_problem(stray, dtype, "FP8 block-scaled (quant_method fp8)")]


@pytest.mark.parametrize(
    ("stray", "dtype"),
    [("x.qweight", "F32"), ("x.weight_packed", "I8"), ("x.weight", "I8"), ("x.weight", "BF16")],
)
def test_plain_tensors_beside_them_are_not(stray, dtype):
    """Packed names in a float or I8 dtype are not packed codes; an I8 weight is codes only
    where the config's scheme stores I8 codes."""
    layout = recognise([*_FP8_WEIGHT, header_entry(stray, dtype)], FP8)
    assert layout is not None and layout.problems == []


@pytest.mark.parametrize("dtype", ["I8", "F8_E5M2"])
def test_an_i8_or_fp8_weight_is_unclaimed_codes_where_the_scheme_stores_i8(dtype):
    layout = recognise([*_INT8_WEIGHT, header_entry("j.weight", dtype)], CT_INT8)
    assert layout is not None and list(layout.weights) == ["i.weight"]
    assert layout.problems == [_problem("j.weight", dtype, "compressed-tensors int-quantized")]


def test_another_schemes_weights_are_named_as_what_they_look_like():
    """bitsandbytes' tensors are no codes dtype or scale name of their own: they are told by
    the scheme they look like, once nothing else is wrong."""
    bnb = [header_entry("b.weight", "U8", (8, 1)), header_entry("b.weight.absmax", "F32", (1,)),
           header_entry("b.weight.quant_map", "F32", (16,)),
           header_entry("b.weight.quant_state.bitsandbytes__nf4", "U8", (100,))]  # fmt: skip
    layout = recognise([*_FP8_WEIGHT, *bnb], FP8)
    assert layout is not None
    assert layout.problems == [
        "the tensors look like bitsandbytes 4-bit, which the config's FP8 block-scaled "
        "(quant_method fp8) does not describe"
    ]


@pytest.mark.parametrize(
    ("qc", "json", "refusal"),
    [
        ("fp8", {"scheme": "quantization_config", "confirmed": True},
         "config.json's quantization_config is str 'fp8', not an object; the scheme is "
         "unknown, so a cast is refused"),
        ("q" * 50, {"scheme": "quantization_config", "confirmed": True},
         f"config.json's quantization_config is str {'q' * 40!r}, not an object; the scheme is "
         "unknown, so a cast is refused"),
        ({"quant_method": "fp8", "transform_config": {"r": 1}},
         {"scheme": "quant_method fp8", "confirmed": True},
         "config.json's quantization_config has a transform_config (rotations such as QuIP), "
         "which this tool does not apply; a cast would write rotated weights, so it is refused"),
        ({"quant_method": "compressed-tensors", "config_groups": {}},
         {"scheme": "quant_method compressed-tensors", "confirmed": True},
         "compressed-tensors quantization_config has no config_groups"),
        ({"quant_method": "hqq"}, {"scheme": "quant_method 'hqq'", "confirmed": True},
         "config.json has a quantization_config with quant_method 'hqq', which this tool cannot "
         "dequantize; a cast would write its codes as values, so it is refused"),
    ],
    ids=["not-an-object", "long-text", "transform", "no-groups", "unknown-method"],
)  # fmt: skip
def test_a_config_the_tool_cannot_follow_is_named_and_refused(qc, json, refusal):
    layout = recognise(_FP8_WEIGHT, qc)
    assert layout is not None
    assert {k: layout.to_json()[k] for k in json} == json
    assert layout.cast_refusal() == refusal
