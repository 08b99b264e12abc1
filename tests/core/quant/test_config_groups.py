"""compressed-tensors' ``weights`` arguments read from a quantization_config: the defaults
compressed-tensors itself applies (``type`` int, ``strategy`` tensor, 8 bits), and every field
that is not what it must be refused by one line naming it, never read as something else."""

from __future__ import annotations

import pytest

from inspector.core.quant.config_groups import ConfigProblem, weight_args
from inspector.core.quant.layout import WeightArgs


def test_missing_fields_take_compressed_tensors_defaults():
    assert weight_args({}, "g") == WeightArgs(8, "int", "tensor")
    assert weight_args({"strategy": None, "num_bits": 4}, "g") == WeightArgs(4, "int", "tensor")


def test_the_smallest_positive_values_are_read():
    args = weight_args({"num_bits": 1, "strategy": "group", "group_size": 1}, "g")
    assert (args.num_bits, args.group_size) == (1, 1)


def test_a_block_keeps_its_two_sides_in_order():
    args = weight_args({"type": "float", "strategy": "block", "block_structure": [64, 128]}, "g")
    assert args.block == (64, 128) and args.kind == "float"


@pytest.mark.parametrize(
    ("weights", "says"),
    [
        ({"num_bits": 0}, "quantization_config group 'g' num_bits is 0, not a positive integer"),
        ({"num_bits": -4}, "quantization_config group 'g' num_bits is -4, not a positive integer"),
        ({"num_bits": True}, "quantization_config group 'g' num_bits is True, not a positive integer"),
        ({"num_bits": "8"}, "quantization_config group 'g' num_bits is '8', not a positive integer"),
        ({"strategy": "group", "group_size": 0},
         "quantization_config group 'g' group_size is 0, not a positive integer"),
        ({"strategy": "block", "block_structure": [0, 128]},
         "quantization_config block_structure is 0, not a positive integer"),
        ({"strategy": "block", "block_structure": [128, -1]},
         "quantization_config block_structure is -1, not a positive integer"),
        ({"strategy": "block", "block_structure": [128, 128, 1]},
         "quantization_config group 'g': block_structure [128, 128, 1]"),
        ({"type": "fp"}, "quantization_config group 'g': weights type 'fp'"),
        ({"strategy": 3}, "quantization_config group 'g': weights type 'int'"),
        ("8 bits", "quantization_config group 'g' has no weights arguments"),
    ],
    ids=["zero", "negative", "bool", "text", "group-0", "block-0", "block-side-2", "block-3-sides", "type",
         "strategy-not-text", "not-an-object"],
)  # fmt: skip
def test_each_field_that_is_not_what_it_must_be_is_refused_by_name(weights, says):
    with pytest.raises(ConfigProblem) as e:
        weight_args(weights, "g")
    assert str(e.value) == says
