"""Strict JSON out: non-finite floats as strings at any depth, one tensor per line, and room for
deeply nested metadata whatever the caller's own stack depth."""

from __future__ import annotations

import json
import math

from inspector.core.json_output import JSON_DEPTH, json_text, rows_document


def test_non_finite_floats_become_strings_at_any_depth():
    value = {"a": [1.5, math.inf, -math.inf, math.nan], "b": {"c": (1, -0.0)}, "d": "x"}
    assert json_text(value) == ('{"a":[1.5,"inf","-inf","nan"],"b":{"c":[1,-0.0]},"d":"x"}')
    assert value["a"][1] == math.inf  # the caller's value is left as it was


def test_rows_one_per_line_then_the_other_keys():
    rows = [{"name": "a", "max": 1.0}, {"name": "b", "max": math.nan}]
    text = rows_document(rows, {"status": "ok", "worst": math.inf})
    assert text == (
        '{"tensors": [\n'
        '  {"name":"a","max":1.0},\n'
        '  {"name":"b","max":"nan"}\n'
        '], "status": "ok", "worst": "inf"}\n'
    )
    assert json.loads(text)["tensors"][1]["max"] == "nan"


def test_deep_metadata_is_written_from_deep_in_the_stack():
    nested: object = 1
    for _ in range(JSON_DEPTH - 10):
        nested = [nested]

    def from_depth(n: int) -> str:
        return from_depth(n - 1) if n else json_text({"m": nested})

    text = from_depth(600)  # a caller 600 frames down (a GUI worker, a job, a test runner)
    assert text.startswith('{"m":' + "[" * (JSON_DEPTH - 10) + "1")
