"""Bounded memory and time: small files that made the reader use gigabytes or run for hours
(tests/hostile/bounds.py). Each is refused with one line, or read, well inside 1 GiB and
without a traceback; tests/cli/test_hostile_corpus.py runs them through every command in a
process of their own and checks the peak memory."""

from __future__ import annotations

import pytest

from inspector.core.errors import CheckpointError
from inspector.core.formats.torch_pickle.names import bounded_repr
from inspector.core.formats.torch_pickle.values import PickleError, check_key
from inspector.core.opening import open_checkpoint
from tests.hostile.bounds import BUILDERS

REFUSED = {
    "memo-flood": "builds more than",
    "empty-set-flood": "builds more than",
    "bytearray-copies": "builds more than",
    "shared-list-tree": "shares the same containers under so many names",
    "shared-tuple-keys": "key of more than 4,096 items",
    "deep-value": "nests containers more than 1000 levels deep",
    "huge-dims": "not a tuple of integers from 0 to 2\\*\\*63",
    "shape-2-64": "not a tuple of integers from 0 to 2\\*\\*63",
    "broadcast-2-40": "is a view of 4,398,046,511,104 bytes over 4 stored bytes",
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_one_line(tmp_path, name):
    path = tmp_path / "pytorch_model.bin"
    path.write_bytes(BUILDERS[name](tmp_path))
    with pytest.raises(CheckpointError, match=REFUSED[name]) as e:
        open_checkpoint(path)
    assert "\n" not in str(e.value)


def test_a_huge_integer_in_a_key_is_named_not_a_traceback(tmp_path):
    """str(10**5000) raises ValueError (the int-to-str limit): the key's name must not."""
    path = tmp_path / "pytorch_model.bin"
    path.write_bytes(BUILDERS["huge-int-in-key"](tmp_path))
    with open_checkpoint(path) as ckpt:
        (value,) = ckpt.files[0].facts.values
    assert value.name == "(<huge int>,)"


def test_bounded_repr_stops_early_on_a_tuple_dag():
    # first: a length that counted only the last part would walk the DAG below for ever
    many = tuple(range(1000))  # the length counts every part, not only the last one
    assert bounded_repr(many, 40) == repr(many)[:40] + "…"
    t = ()
    for _ in range(60):
        t = (t, t)  # 2**60 leaves as a tree
    text = bounded_repr(t, 40)
    assert len(text) <= 41 and text.endswith("…")
    assert bounded_repr((1, "a", (2,))) == "(1, 'a', (2,))" == repr((1, "a", (2,)))


def test_bounded_repr_takes_whole_parts_until_past_the_limit_then_marks_the_cut():
    """Parts are taken while the text is at most ``limit`` (120) long: a tuple whose text
    reaches exactly 120 before its closing ",)" is shown whole; one character more and the
    closing part is cut and marked."""
    whole = ("x" * 117,)  # "(" and a 119-character repr: 120, then ",)"
    assert bounded_repr(whole) == repr(whole)
    longer = ("x" * 118,)
    assert bounded_repr(longer) == repr(longer)[:120] + "…"


def test_bounded_repr_shows_an_integer_up_to_10_to_the_40():
    for n in (10**40, -(10**40)):
        assert bounded_repr(n) == repr(n)
    for n in (10**40 + 1, -(10**40) - 1):
        assert bounded_repr(n) == "<huge int>"


def test_bounded_repr_names_a_stand_in_by_its_qualname_and_anything_else_by_its_type():
    class StandIn:
        qualname = "torch._utils._rebuild_tensor_v2"

    class Odd:
        qualname = 7  # not text: not trusted as a name

    assert bounded_repr((StandIn(), object(), Odd())) == (
        "(torch._utils._rebuild_tensor_v2, <object>, <Odd>)"
    )


def test_bounded_repr_marks_a_clipped_string_or_bytes_as_clipped():
    """A long storage key or member name from a file is shown clipped; without the mark a reader
    takes the clipped text for the whole name (it was shown cut at limit + 1 with nothing to say
    so). A string of exactly the limit is whole, unmarked."""
    assert bounded_repr("k" * 100, 80) == repr("k" * 80) + "…"
    assert bounded_repr(b"\x00" * 30, 20) == repr(b"\x00" * 20) + "…"
    assert bounded_repr("k" * 80, 80) == repr("k" * 80)
    assert bounded_repr(("k" * 100,), 80).endswith("…")


def test_check_key_counts_a_shared_tuple_once():
    t = ()
    for _ in range(12):
        t = (t, t)  # 8191 items as a tree, 13 distinct tuples
    with pytest.raises(PickleError, match="more than 4,096 items"):
        check_key(t)
    small = ((1, 2), (1, 2), "x")
    assert check_key(small) is small


def test_a_key_of_exactly_4096_items_as_a_tree_is_read_and_one_more_is_refused():
    """The bound counts the tuple itself and each item once: 4095 items under one tuple are 4096
    and read; 4096 items are 4097 and refused. Items hashed by identity (our own records) count
    one each like strings do."""
    for item in ("s", object()):
        fits = (item,) * 4095
        assert check_key(fits) is fits
        with pytest.raises(PickleError) as e:
            check_key((item,) * 4096)
        assert str(e.value) == "uses a key of more than 4,096 items (counted as a tree)"
    nested = (("a",) * 2047, ("b",) * 2047)  # 1 + 2 * (1 + 2047) = 4097
    with pytest.raises(PickleError):
        check_key(nested)
    fits = (("a",) * 2047, ("b",) * 2046)  # 4096
    assert check_key(fits) is fits
