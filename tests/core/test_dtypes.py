"""Dtype names as people type them, and the line for one that is not a dtype."""

from __future__ import annotations

import pytest

from inspector.core.dtypes import DTYPES, parse_dtype


@pytest.mark.parametrize(
    "text, name",
    [
        ("f16", "F16"),
        (" BF16 ", "BF16"),
        ("torch.float32", "F32"),
        ("fp16", "F16"),
        ("bf16", "BF16"),
    ],
)
def test_names_and_aliases(text, name):
    assert parse_dtype(text).name == name


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError) as e:
        parse_dtype("F33")
    assert str(e.value) == (
        f"unknown dtype 'F33' (known: {', '.join(DTYPES)}; aliases like float32, fp16, bf16)"
    )
