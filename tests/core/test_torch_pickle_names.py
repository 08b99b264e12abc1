"""How the non-tensor leaves of a checkpoint are named and shown (``list``, the Pickle tab): the
exact text of each kind of value, clipped at 120 characters, and keys that are not strings."""

from __future__ import annotations

import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.formats.torch_pickle.allowlist import StorageRef, TensorRecord
from inspector.core.formats.torch_pickle.archive import StorageSpan
from inspector.core.formats.torch_pickle.machine import PickleError
from inspector.core.formats.torch_pickle.names import flatten, place_tensor
from inspector.core.layout import StridedTensorInfo, TensorInfo


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


def _record(shape, stride, offset=0, numel=12, typed=True):
    storage = StorageRef("0", DTYPES["F32"] if typed else None, numel if typed else numel * 4)
    return TensorRecord(storage, DTYPES["F32"], offset, tuple(shape), tuple(stride))


def _place(rec, offset=100, nbytes=48, name="t"):
    return place_tensor("m.pt", name, rec, lambda _key: StorageSpan(offset, nbytes))


def test_a_view_is_placed_inside_its_storage_to_the_last_byte():
    t = _place(_record((3, 4), (4, 1)))  # exactly the 48 stored bytes
    assert (type(t), t.data_offsets) == (TensorInfo, (100, 148))
    t = _place(_record((4, 3), (1, 4)))  # the transpose: same bytes, strided
    assert isinstance(t, StridedTensorInfo)
    assert (t.data_offsets, t.strides, t.span_elems) == ((100, 148), (1, 4), 12)
    t = _place(_record((2, 2), (1, 5), offset=2))  # elements 2, 3, 7, 8
    assert (t.data_offsets, t.span_elems) == ((108, 124), 7)
    assert _place(_record((3, 4), (4, 1)), offset=0).data_offsets == (0, 48)


def test_a_view_one_element_past_its_storage_is_refused():
    for rec, nbytes in (
        (_record((3, 4), (4, 1), offset=1), 48),  # ends at element 12 of 0..11
        (_record((4, 3), (1, 4), offset=1), 48),
        (_record((3, 4), (4, 1), numel=11), 44),  # the storage is shorter than its span
        (_record((3, 4), (4, 1), numel=11, typed=False), 44),  # untyped: numel is bytes
    ):
        with pytest.raises(PickleError, match="reaches past the end of its storage"):
            _place(rec, nbytes=nbytes)


def test_a_storage_of_another_size_than_the_pickle_declares_is_refused():
    for rec, nbytes in (
        (_record((3, 4), (4, 1), numel=12), 52),
        (_record((2,), (1,), numel=12), 44),  # even where the tensor does not reach the end
        (_record((3, 4), (4, 1), numel=12, typed=False), 44),
    ):
        with pytest.raises(PickleError, match=f"holds {nbytes} bytes where the pickle declares"):
            _place(rec, nbytes=nbytes)


def test_a_compressed_storage_is_refused():
    with pytest.raises(PickleError, match="compressed"):
        _place(_record((3, 4), (4, 1)), offset=-1)


def test_each_refusal_names_its_tensor_clipped_at_80_characters():
    name = "model.layers." + "x" * 100
    shown = "'" + name[:80] + "'…"
    cases = (
        (
            _record((3, 4), (4, 1)),
            -1,
            48,
            f"tensor {shown}: its storage is compressed in the zip, which torch never writes",
        ),
        (
            _record((3, 4), (4, 1)),
            100,
            52,
            f"tensor {shown}: its storage holds 52 bytes where the pickle declares 48; torch "
            "refuses such a file",
        ),
        # exactly 2**63 bytes: one more than numpy can address
        (_record((2**61,), (1,)), 100, 48, f"tensor {shown} has 2**63 bytes of values or more"),
        (
            _record((3, 4), (4, 1), offset=1),
            100,
            48,
            f"tensor {shown} reaches past the end of its storage (52 > 48 bytes)",
        ),
        # a stride-0 view one element past 1 GiB
        (
            _record(((1 << 28) + 1,), (0,), numel=1),
            100,
            4,
            f"tensor {shown} is a view of 1,073,741,828 bytes over 4 stored bytes (stride 0); "
            "not read",
        ),
        # one row past 1024 times the 2 MiB it repeats, the row one row into its storage
        (
            _record((1025, _ROW), (0, 1), offset=_ROW, numel=2 * _ROW),
            100,
            8 * _ROW,
            f"tensor {shown} is a view of 2,149,580,800 bytes over 2,097,152 stored bytes "
            "(stride 0); not read",
        ),
    )
    for rec, offset, nbytes, says in cases:
        with pytest.raises(PickleError) as e:
            _place(rec, offset, nbytes, name)
        assert str(e.value) == says


_ROW = 1 << 19  # F32 elements: 2 MiB, which 1024 times is 2 GiB, past the 1 GiB floor


def test_a_stride_0_view_is_read_up_to_1_gib_or_1024_times_the_bytes_it_repeats():
    """Up to these bounds a broadcast view is a tensor like any other (a position embedding
    expanded over a batch); past them, reading its values would run for hours."""
    t = _place(_record((1 << 28,), (0,), numel=1), nbytes=4)
    assert isinstance(t, StridedTensorInfo) and t.span_elems == 1
    t = _place(_record((1024, _ROW), (0, 1), offset=_ROW, numel=2 * _ROW), nbytes=8 * _ROW)
    assert isinstance(t, StridedTensorInfo) and t.span_elems == _ROW


def test_a_key_that_is_an_unknown_object_is_named_by_its_class_clipped_at_120():
    from inspector.core.formats.torch_pickle.unknown import Unknown

    _tensors, values = flatten({Unknown("pkg." + "C" * 130): 5, Unknown("pkg.Short"): 6})
    assert [v.name for v in values] == ["<pkg." + "C" * 114 + "…", "<pkg.Short>"]


def test_an_object_shared_by_two_keys_is_not_a_cycle():
    shared = [1, 2]
    _tensors, values = flatten({"a": shared, "b": shared})
    assert [v.name for v in values] == ["a.0", "a.1", "b.0", "b.1"]


def test_the_refusal_says_how_far_past_the_storage_a_view_reaches():
    with pytest.raises(PickleError) as e:
        _place(_record((3, 4), (4, 1), offset=1), nbytes=48)
    assert str(e.value) == "tensor 't' reaches past the end of its storage (52 > 48 bytes)"


def test_a_cycle_is_named_where_it_closes():
    loop: list = []
    loop.append(loop)
    with pytest.raises(PickleError) as e:
        flatten(loop)
    assert str(e.value) == "contains itself (a cycle at 0)"
    top: dict = {}
    top["me"] = {"again": top}
    with pytest.raises(PickleError) as e:
        flatten(top)
    assert str(e.value) == "contains itself (a cycle at me.again)"


def test_keys_nest_sixteen_deep_and_no_deeper():
    from inspector.core.formats.torch_pickle.values import MAX_KEY_DEPTH, check_key

    key: object = "leaf"
    for _ in range(MAX_KEY_DEPTH):
        key = (key,)
    assert check_key(key) is key  # 16 tuples around the leaf
    with pytest.raises(PickleError) as e:
        check_key((key,))
    assert str(e.value) == "uses a key nested more than 16 levels deep"
    with pytest.raises(PickleError) as e:
        check_key(("a", ("b", [1])))  # a list deep inside a tuple: not hashable
    assert str(e.value) == "uses a list as a dict key or set item"
    assert check_key(frozenset({("a", 1)})) == frozenset({("a", 1)})


def test_a_record_in_a_key_is_a_leaf_like_a_string():
    """Our records (a stand-in for a class the file names) are hashed by identity: they nest
    nothing, so 16 tuples around one are as deep as 16 around a string."""
    from inspector.core.formats.torch_pickle.values import MAX_KEY_DEPTH, check_key

    key: object = object()
    for _ in range(MAX_KEY_DEPTH):
        key = (key,)
    assert check_key(key) is key


def test_a_key_a_hundred_thousand_tuples_deep_is_refused_at_sixteen_not_walked_down():
    """The walk stops at the bound: walking on would overflow Python's own stack first."""
    from inspector.core.formats.torch_pickle.values import check_key

    key: object = "leaf"
    for _ in range(100_000):
        key = (key,)
    with pytest.raises(PickleError) as e:
        check_key(key)
    assert str(e.value) == "uses a key nested more than 16 levels deep"


def test_a_shared_tuple_seen_shallow_first_still_counts_its_depth_where_it_is_seen_again():
    """The walk remembers each tuple's size so a shared one is counted without walking it again;
    it must also remember how deep the tuple goes: the same 15-deep tuple first met at the top
    and then 14 levels down nests the key 30 deep, which the remembered size alone let through
    (a pickle shares tuples through its memo, so a file can build exactly this)."""
    from inspector.core.formats.torch_pickle.values import check_key

    def wrapped(x: object, n: int) -> object:
        for _ in range(n):
            x = (x,)
        return x

    shallow = wrapped("leaf", 14)
    fits = (shallow, wrapped(shallow, 1))  # 16 tuples deep, the shared one met shallow first
    assert check_key(fits) is fits
    for key in ((shallow, wrapped(shallow, 2)), (wrapped(shallow, 1), wrapped(shallow, 15))):
        with pytest.raises(PickleError) as e:
            check_key(key)  # 17 and 31 deep
        assert str(e.value) == "uses a key nested more than 16 levels deep"


def test_a_cycle_at_the_top_and_a_long_key_and_a_contiguous_3d_tensor():
    nameless: dict = {}
    nameless[""] = nameless  # closes under an empty name
    with pytest.raises(PickleError) as e:
        flatten(nameless)
    assert str(e.value) == "contains itself (a cycle at the top level)"
    top: dict = {}
    top["x"] = top
    with pytest.raises(PickleError) as e:
        flatten(top)
    assert str(e.value) == "contains itself (a cycle at x)"
    _t, values = flatten({("k" * 116,): 1, ("j" * 115,): 2})  # key reprs of 121 and 120
    names = sorted(v.name for v in values)
    assert names == ["('" + "j" * 115 + "',)", "('" + "k" * 116 + "'" + "…"]
    # a contiguous 3-D view is a plain byte range (streamed), not a gathered strided one
    rec = TensorRecord(StorageRef("0", DTYPES["F32"], 24), DTYPES["F32"], 0, (2, 3, 4), (12, 4, 1))
    t = place_tensor("m.pt", "t", rec, lambda _key: StorageSpan(0, 96))
    assert (type(t), t.data_offsets) == (TensorInfo, (0, 96))
