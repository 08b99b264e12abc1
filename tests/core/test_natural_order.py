"""Natural name order: numbers as numbers, and the batch key function equal to the single one."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

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
