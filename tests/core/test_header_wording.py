"""How values are named in error messages: the words are part of what a person reads (mutation
testing found them unchecked)."""

from __future__ import annotations

from inspector.core.wording import _clip, _dump, _json_type, _q


def test_json_types_in_words():
    words = {
        "an object": {}, "a list": [], "a string": "", "a boolean": True, "a number": 3,
        "null": None,
    }  # fmt: skip
    assert {w: _json_type(v) for w, v in words.items()} == {w: w for w in words}
    assert _json_type(2.5) == "a number" and _json_type(b"x") == "bytes"


def test_clip_and_quote_keep_one_short_line():
    assert _clip("abcdef", 6) == "abcdef"
    assert _clip("abcdefg", 6) == "abc..."
    assert _q("x" * 100) == "'" + "x" * 76 + "..." and len(_q("x" * 100)) == 80
    assert _q("a\nb") == "'a\\nb'"


def test_dump_shows_json_short_and_on_one_line():
    assert _dump({"k": [1, 2]}) == '{"k": [1, 2]}'
    assert _dump("é") == '"é"'  # not \u00e9
    assert _dump("a\nb") == '"a\\nb"'
    assert _dump(list(range(100))).endswith("...") and len(_dump(list(range(100)))) == 80
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert _dump(deep) == "a list"  # too deep to encode: named by its type
    assert _dump({1, 2}) == "set"
