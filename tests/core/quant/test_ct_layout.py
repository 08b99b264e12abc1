"""What compressed-tensors' layout makes of a header: one weight per module with all its
companions (activation scales too, which a cast drops with the codes), and a line for each
module it cannot place — in no group, stored unlike its group, without a scale, or named by
``ignore`` — without stopping at the first."""

from __future__ import annotations

import pytest

from inspector.core.quant.recognise import recognise
from inspector.core.quant.schemes import QuantScheme
from tests.quant_folders import ct_config, header_codes, header_entry, header_packed

_FP8 = {"num_bits": 8, "type": "float", "strategy": "channel"}
_INT4 = {"num_bits": 4, "type": "int", "strategy": "channel"}


def _qc(weights: dict = _FP8, fmt: str = "float-quantized", **kw) -> dict:
    return ct_config(fmt, weights, **kw)


def test_activation_scales_are_companions_of_their_weight():
    extra = [
        header_entry("a.input_scale", "F32", (1,)),
        header_entry("a.output_scale", "F32", (1,)),
    ]
    layout = recognise([*header_codes("a", "F8_E4M3"), *extra], _qc())
    assert layout is not None and not layout.problems
    assert layout.part_of == dict.fromkeys(
        ["a.weight", "a.weight_scale", "a.input_scale", "a.output_scale"], "a.weight"
    )


def test_each_module_that_cannot_be_placed_is_named_and_the_others_still_read():
    tensors = [
        header_entry("p.weight_packed", "I32", (4, 2)), header_entry("p.weight_scale", "BF16", (4, 1)),
        *header_codes("b", "F8_E4M3"),
        header_entry("n.weight_packed", "I32", (4, 2)),  # no scale at all
        *header_codes("lm_head", "F8_E4M3"),
    ]  # fmt: skip
    layout = recognise(tensors, _qc(ignore=["lm_head"]))
    assert layout is not None and set(layout.weights) == {"b.weight", "lm_head.weight"}
    assert layout.problems[:3] == [  # then the codes left unclaimed, as codes
        "'p.weight_packed' is stored as packed, but its group 'g' says float-quantized",
        "'n.weight_packed' is stored as packed, but its group 'g' says float-quantized",
        "'lm_head.weight' is quantized but the config's ignore names it",
    ]


def test_a_packed_module_without_a_scale_is_found_by_its_codes():
    layout = recognise(
        [header_entry("n.weight_packed", "I32", (4, 2))], _qc(_INT4, "pack-quantized")
    )
    assert layout is not None and list(layout.weights) == ["n.weight"]
    assert layout.problems == ["'n.weight_packed' has no weight_scale"]


@pytest.mark.parametrize("targeted", ["a", "b"])
def test_a_module_no_group_targets_is_named_not_read(targeted):
    """Whichever comes first in the header: the modules after an untargeted one are read too."""
    layout = recognise(
        [*header_codes("a", "F8_E4M3"), *header_codes("b", "F8_E4M3")],
        _qc(targets=[f"re:^{targeted}$"]),
    )
    other = "b" if targeted == "a" else "a"
    assert layout is not None and list(layout.weights) == [f"{targeted}.weight"]
    assert layout.problems[0] == (
        f"'{other}.weight_scale' belongs to no quantization group of the config"
    )


def test_two_formats_are_named_together():
    qc = {"quant_method": "compressed-tensors", "format": "mixed-precision", "config_groups": {
        "a": {"format": "float-quantized", "targets": ["re:^a$"], "weights": _FP8},
        "b": {"format": "pack-quantized", "targets": ["re:^p$"], "weights": _INT4}}}  # fmt: skip
    tensors = [*header_codes("a", "F8_E4M3"), *header_packed("p", "I32")]
    layout = recognise(tensors, qc)
    assert layout is not None and not layout.problems
    assert layout.scheme_text == "compressed-tensors float-quantized/pack-quantized"
    assert {n: w.scheme for n, w in layout.weights.items()} == {
        "a.weight": QuantScheme.CT_FLOAT, "p.weight": QuantScheme.CT_PACK
    }  # fmt: skip


@pytest.mark.parametrize(
    ("qc", "why"),
    [
        ({"quant_method": "compressed-tensors", "config_groups": ["g"]},
         "compressed-tensors quantization_config has no config_groups"),
        (_qc(targets=["Linear", 3]), "quantization_config group 'g': targets ['Linear', 3]"),
        ({"quant_method": "compressed-tensors", "format": "float-quantized",
          "config_groups": {"g": {"targets": ["Linear"]}}},
         "quantization_config group 'g' has no weights arguments"),
    ],
    ids=["groups-a-list", "target-not-text", "no-weights"],
)  # fmt: skip
def test_config_groups_that_cannot_be_followed_are_refused_by_name(qc, why):
    layout = recognise(header_codes("a", "F8_E4M3"), qc)
    assert layout is not None and layout.cast_refusal() == why
