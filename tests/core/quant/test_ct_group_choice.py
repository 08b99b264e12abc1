"""Which compressed-tensors group a module belongs to: the most specific target wins (an exact
name, then a ``re:`` pattern, then a class name such as ``Linear``); among equals, the group
whose format is how the module's codes are stored, then the first by name. And ``ignore``
names modules by exact name or pattern only (a class name there cannot be checked)."""

from __future__ import annotations

import pytest

from inspector.core.quant.config_groups import CtGroup, ct_group_of, ct_ignored
from inspector.core.quant.layout import WeightArgs
from inspector.core.quant.recognise import recognise
from inspector.core.quant.schemes import QuantScheme
from tests.quant_folders import header_codes, header_entry, header_fp4, header_packed

_ARGS = WeightArgs(8, "int", "channel")


def _group(name: str, *targets: str) -> CtGroup:
    return CtGroup(name, targets, "int-quantized", _ARGS)


@pytest.mark.parametrize(
    ("targets_a", "targets_b", "wins"),
    [
        (["Linear"], ["model.mlp.up"], "b"),  # an exact name beats a class
        (["re:.*mlp.*"], ["model.mlp.up"], "b"),  # and a pattern
        (["Linear"], ["re:model\\.mlp\\..*"], "b"),  # a pattern beats a class
        (["re:.*up$"], ["re:.*mlp.*"], "a"),  # two patterns tie: the first by name
        (["Linear"], ["Embedding"], "a"),  # two classes tie too
        (["re:.*down$"], ["Linear"], "b"),  # a pattern that does not match counts for nothing
        (["model.mlp"], ["Linear"], "b"),  # nor does another module's exact name
    ],
)
def test_the_most_specific_group_wins(targets_a, targets_b, wins):
    groups = [_group("b", *targets_b), _group("a", *targets_a)]
    assert ct_group_of("model.mlp.up", groups).name == wins


def test_a_module_no_group_names_belongs_to_none():
    assert ct_group_of("model.mlp.up", [_group("a", "re:.*down$", "model.mlp")]) is None


def test_among_equals_the_group_that_fits_wins_else_the_first_by_name():
    groups = [_group("b", "Linear"), _group("a", "Linear"), _group("c", "Linear")]
    assert ct_group_of("m", groups, lambda g: g.name == "c").name == "c"
    assert ct_group_of("m", groups, lambda g: False).name == "a"


@pytest.mark.parametrize(
    ("ignore", "ignored"),
    [
        (["model.mlp.up"], True),
        (["re:.*\\.up$"], True),
        (["re:up"], False),  # re.match anchors at the start of the name
        (["Linear"], False),  # a class name: we cannot see classes, so it names nothing
        (["lm_head"], False),
        ([7, None, "model.mlp.up"], True),  # what is not text is passed over
        ("model.mlp.up", False),  # not a list: nothing ignored
    ],
)
def test_ignore_names_modules_by_name_or_pattern(ignore, ignored):
    assert ct_ignored("model.mlp.up", ignore) is ignored


def _config(**formats: dict) -> dict:
    groups = {name: {"format": fmt, "targets": ["Linear"], "weights": w}
              for name, (fmt, w) in formats.items()}  # fmt: skip
    return {"quant_method": "compressed-tensors", "format": "mixed-precision",
            "config_groups": groups}  # fmt: skip


_INT4 = {"num_bits": 4, "type": "int", "strategy": "channel"}
_INT8 = {"num_bits": 8, "type": "int", "strategy": "channel"}
_FP8 = {"num_bits": 8, "type": "float", "strategy": "channel"}
_FP4 = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}


@pytest.mark.parametrize(
    ("formats", "tensors", "schemes"),
    [
        ({"a": ("float-quantized", _FP8), "b": ("pack-quantized", _INT4)},
         header_packed("p", "I32") + header_codes("f", "F8_E4M3"),
         {"p.weight": QuantScheme.CT_PACK, "f.weight": QuantScheme.CT_FLOAT}),
        ({"a": ("nvfp4-pack-quantized", _FP4), "b": ("pack-quantized", _INT4)},
         header_packed("p", "I32") + header_fp4("n"),
         {"p.weight": QuantScheme.CT_PACK, "n.weight": QuantScheme.CT_NVFP4}),
        ({"a": ("pack-quantized", _INT4), "b": ("nvfp4-pack-quantized", _FP4)},
         header_packed("p", "I32") + header_fp4("n"),
         {"p.weight": QuantScheme.CT_PACK, "n.weight": QuantScheme.CT_NVFP4}),
        ({"a": ("nvfp4-pack-quantized", _FP4), "b": ("float-quantized", _FP8)},
         header_codes("f", "F8_E4M3") + header_fp4("n"),
         {"f.weight": QuantScheme.CT_FLOAT, "n.weight": QuantScheme.CT_NVFP4}),
        ({"a": ("int-quantized", _INT8), "b": ("float-quantized", _FP8)},
         header_codes("i", "I8") + header_codes("f", "F8_E4M3"),
         {"i.weight": QuantScheme.CT_INT, "f.weight": QuantScheme.CT_FLOAT}),
    ],
    ids=["float-or-pack", "nvfp4-or-pack", "pack-or-nvfp4", "nvfp4-or-float", "int-or-float"],
)  # fmt: skip
def test_groups_that_tie_on_linear_go_to_the_modules_stored_their_way(formats, tensors, schemes):
    """A mixed-precision model whose groups all target Linear: each module takes the group
    whose format is how its codes are stored (packed I32, packed U8 FP4, F8 or I8 codes)."""
    layout = recognise(tensors, _config(**formats))
    assert layout is not None and not layout.problems
    assert {n: w.scheme for n, w in layout.weights.items()} == schemes


def test_a_scale_without_codes_is_a_problem_not_a_crash():
    qc = _config(a=("int-quantized", _INT8))
    layout = recognise(
        [*header_codes("i", "I8"), header_entry("stray.weight_scale", "BF16", (4, 1))], qc
    )
    assert layout is not None and list(layout.weights) == ["i.weight"]
    assert (
        layout.problems[0] == "'stray.weight_scale' belongs to no quantization group of the config"
    )
