"""How the non-tensor leaves of a checkpoint are named and shown (``list``, the Pickle tab): the
exact text of each kind of value, clipped at 120 characters, and keys that are not strings."""

from __future__ import annotations

from inspector.core.torch_pickle.names import flatten


def test_each_kind_of_value_is_shown_exactly():
    root = {
        "none": None,
        "flag": True,
        "epoch": 3,
        "lr": 2.5,
        "z": 1 + 2j,
        "edge": 10**40,
        "huge": 10**40 + 1,
        "neg_huge": -(10**41),
        "blob": b"abc",
        "tags": {1, 2},
        "empty_dict": {},
        "empty_list": [],
        "empty_tuple": (),
        "fits": "y" * 118,  # its repr is exactly 120 characters
        "clipped": "z" * 119,
        "keys": {3: "three", (1, 2): "pair", None: "none"},
    }
    _tensors, values = flatten(root)
    assert {v.name: v.text for v in values} == {
        "none": "None",
        "flag": "True",
        "epoch": "3",
        "lr": "2.5",
        "z": "(1+2j)",
        "edge": "1" + "0" * 40,
        "huge": "a huge integer",
        "neg_huge": "a huge integer",
        "blob": "3 bytes",
        "tags": "a set of 2",
        "empty_dict": "{}",
        "empty_list": "[]",
        "empty_tuple": "()",
        "fits": "'" + "y" * 118 + "'",
        "clipped": "'" + "z" * 118 + "…",
        "keys.3": "'three'",
        "keys.(1, 2)": "'pair'",
        "keys.None": "'none'",
    }
