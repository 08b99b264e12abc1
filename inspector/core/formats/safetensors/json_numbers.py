"""serde_json's rule for numbers that are out of range, which the reference loader applies to
every number in a header, extra fields included.

serde_json (without its ``float_roundtrip`` feature) parses a number approximately: it keeps the
digits that fit in a u64, drops the rest (each dropped integer digit raises the exponent), and
multiplies once by a power of ten from a table. A result of ±inf is refused ("number out of
range"). Python's ``float()`` rounds correctly, so near the largest double the two disagree:
``1.7976931348623158e308`` is the largest double to Python and out of range to serde, and so is
the 309-digit integer of the largest double itself.
"""

from __future__ import annotations

import math

_U64_MAX = 2**64 - 1
_I32_MAX = 2**31 - 1
_POW10 = [float(f"1e{i}") for i in range(309)]  # serde's table: the literals 1e0 … 1e308


def overflows(literal: str) -> bool:
    """Whether serde_json refuses the JSON number ``literal`` as out of range."""
    s, n = literal, len(literal)
    i = 1 if s[:1] == "-" else 0
    significand = exponent = 0
    while i < n and "0" <= s[i] <= "9":  # the integer part, while it fits a u64
        digit = ord(s[i]) - 48
        if significand * 10 + digit > _U64_MAX:
            break
        significand = significand * 10 + digit
        i += 1
    while i < n and "0" <= s[i] <= "9":  # the rest of it: dropped, each a power of ten
        exponent += 1
        i += 1
    if i < n and s[i] == ".":
        i += 1
        while i < n and "0" <= s[i] <= "9":
            digit = ord(s[i]) - 48
            if significand * 10 + digit > _U64_MAX:  # further decimals are dropped
                while i < n and "0" <= s[i] <= "9":
                    i += 1
                break
            significand = significand * 10 + digit
            exponent -= 1
            i += 1
    if i < n and s[i] in "eE":
        i += 1
        positive = True
        if i < n and s[i] in "+-":
            positive = s[i] == "+"
            i += 1
        e = 0
        while i < n and "0" <= s[i] <= "9":
            digit = ord(s[i]) - 48
            if e * 10 + digit > _I32_MAX:  # an exponent past i32: ±inf, or 0 when negative
                return significand != 0 and positive
            e = e * 10 + digit
            i += 1
        exponent = exponent + e if positive else exponent - e
    return _from_parts_overflows(significand, exponent)


def _from_parts_overflows(significand: int, exponent: int) -> bool:
    f = float(significand)  # round to nearest, as Rust's `u64 as f64`
    while True:
        if abs(exponent) < len(_POW10):
            if exponent >= 0:
                return math.isinf(f * _POW10[exponent])
            return False  # a division never overflows
        if f == 0.0:
            return False
        if exponent >= 0:
            return True
        f /= 1e308
        exponent += 308
