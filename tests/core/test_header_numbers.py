"""Numbers near the largest double, judged like the reference loader (serde_json's approximate
parse refuses some that Python rounds to a finite float): the rule is checked against
``safe_open`` itself, on hand-picked edges and on generated literals."""

from __future__ import annotations

import struct
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors import safe_open

from inspector.core.errors import CheckpointError
from inspector.core.formats.safetensors import read_header
from inspector.core.formats.safetensors.json_numbers import overflows

F64_MAX_DIGITS = str(int(sys.float_info.max))  # 309 digits
HEADER = '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "extra": [%s]}}'


def _reference_refuses(path) -> bool:
    try:
        with safe_open(str(path), "np") as f:
            list(f.keys())
    except Exception:  # the reference's error types are not a contract
        return True
    return False


def _ours_refuses(path) -> bool:
    try:
        read_header(path)
    except CheckpointError:
        return True
    return False


def _file(tmp_path, literal: str):
    raw = (HEADER % literal).encode()
    path = tmp_path / "n.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * 4)
    return path


EDGES = [
    "1.7976931348623157e308",  # the largest double: fine to both
    "1.7976931348623158e308",  # Python rounds it to the largest double; serde overflows
    "1.797693134862315708e308",
    "17976931348623157081e289",
    "17976931348623156224e289",  # serde's largest with these digits
    "179769313486231570e291",
    "0.17976931348623157e309",
    F64_MAX_DIGITS,  # the largest double written out as an integer: out of range to serde
    "179769313486231562249" + "9" * 288,  # just below serde's cut for 309-digit integers
    "179769313486231562250" + "0" * 288,
    "-" + F64_MAX_DIGITS,
    "1" + "0" * 400,
    "1e309",
    "1e-400",
    "0e99999999999",  # an exponent past i32, but zero
    "1e99999999999",
    "1e-99999999999",
    "18446744073709551615",  # u64::MAX
    "18446744073709551616",
    "-9223372036854775809",
    "1.0E+308",
    "1E400",  # an upper-case exponent
    "-1E+400",
    "1e+400",  # an explicit sign before the exponent
    "1e-400",
    "5.5e-4000000000000",
    # found by mutation testing: finite to Python, and judged differently by a parser that
    # takes "E" for a digit or keeps decimals past u64 (checked on 6,144 boundary literals)
    "-1797693134862315707E290",
    "-0.1797693134862315707E309",
    "-0.179769313486231570813e309",
    "-0.179769313486231570813E309",
    # a twentieth significant decimal that still fits a u64: kept (a parser that stops one
    # digit early reads 1.7976931348623156295e308, in range)
    "1.79769313486231562952e308",
]


@pytest.mark.parametrize("literal", EDGES)
def test_edges_are_judged_like_the_reference(tmp_path, literal):
    path = _file(tmp_path, literal)
    refused = _reference_refuses(path)
    assert overflows(literal) is refused
    assert _ours_refuses(path) is refused


_digits = st.text("0123456789", min_size=1, max_size=30).map(lambda d: d.lstrip("0") or "0")
_near_max = st.builds(
    lambda cut, tail, sign: sign + F64_MAX_DIGITS[:cut] + tail,
    st.integers(15, 25),
    st.text("0123456789", max_size=300),
    st.sampled_from(["", "-"]),
)
_literals = _near_max | st.builds(
    lambda whole, frac, exp: whole + (f".{frac}" if frac else "") + exp,
    _digits,
    st.text("0123456789", max_size=25),
    st.one_of(st.just(""), st.integers(250, 330).map(lambda e: f"e{e}")),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_literals)
def test_generated_numbers_are_judged_like_the_reference(tmp_path, literal):
    path = _file(tmp_path, literal)
    assert overflows(literal) is _reference_refuses(path), literal
