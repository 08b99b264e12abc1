"""Natural name order: numbers as numbers, and the batch key function equal to the single one."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.core import natural_order
from inspector.core.natural_order import natural_key, natural_keys

NAME = st.text(alphabet="ab.0123456789_é٣", max_size=30)  # dots, digit runs, a non-ASCII digit


def test_numbers_sort_as_numbers():
    names = ["layer.10.w", "layer.2.w", "layer.1.w", "layer.2.b", "layer.02.w", "layer..3"]
    assert sorted(names, key=natural_key) == [
        "layer..3",
        "layer.1.w",
        "layer.2.b",
        "layer.2.w",
        "layer.02.w",
        "layer.10.w",
    ]


@given(st.lists(NAME, max_size=30))
def test_batch_keys_equal_single_keys(names):
    assert natural_keys(names) == [natural_key(n) for n in names]


ASCII_NAME = st.text(alphabet="ab.0123456789_\n", max_size=30)  # a newline inside a name too


@given(
    st.lists(ASCII_NAME | NAME, max_size=30),
    st.sampled_from([0, 10, 79, 80, 250]),
    st.sampled_from([1, 2, 7, 1 << 15]),
)
def test_keys_built_on_the_joined_text_equal_single_keys(names, run, batch):
    """The numpy path for many names (forced here for short lists, in batches): digit runs at
    either end, empty names, runs too long for an ASCII length character, the characters just
    below and above the digits, newlines and non-ASCII digits (in any batch: then every name takes
    the per-part path)."""
    names = [*names, "w" + "7" * run, "7" * run, "a/1:2"]  # "/" and ":" around the digits
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(natural_order, "VECTOR_MIN_NAMES", 0)
        mp.setattr(natural_order, "_VECTOR_BATCH", batch)
        assert natural_keys(names) == [natural_key(n) for n in names]
        assert natural_keys(iter(names)) == [natural_key(n) for n in names]


def test_many_names_sort_naturally():
    names = [f"model.layers.{i}.mlp.w{i % 3}" for i in range(3000, 0, -1)]
    assert len(names) >= natural_order.VECTOR_MIN_NAMES
    keys = natural_keys(names)
    assert keys == [natural_key(n) for n in names]
    order = sorted(range(len(names)), key=keys.__getitem__)
    assert [names[i] for i in order[:3]] == [
        "model.layers.1.mlp.w1",
        "model.layers.2.mlp.w2",
        "model.layers.3.mlp.w0",
    ]


def test_name_order_descending_reverses_names_and_keeps_ties_in_file_order():
    keys = natural_keys(["b.2", "a.10", "b.2", "a.9"])
    assert natural_order.name_order(keys, descending=False).tolist() == [3, 1, 0, 2]
    assert natural_order.name_order(keys, descending=True).tolist() == [0, 2, 1, 3]
