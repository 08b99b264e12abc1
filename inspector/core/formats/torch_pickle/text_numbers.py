"""Protocol 0's numbers (INT, LONG, FLOAT, memo keys) read exactly as CPython's C unpickler reads them.

``torch.load(weights_only=False)`` unpickles with ``_pickle.c`` (its ``weights_only=True``
refuses these opcodes), and that reader is not Python's ``int()``/``float()``: INT is C
``strtol`` with base 0 (``I010`` is 8, ``I0x10`` is 16) and falls back to ``int(text, 0)`` where
strtol stops short; every argument ends at its first NUL byte (``I7\\0junk`` is 7); LONG drops one
trailing ``L``, not all; FLOAT takes no whitespace or underscores and refuses an overflow. A
reader that parsed these its own way would show a hostile file's shapes and offsets other than
the ones torch uses. The rules below were checked against ``pickle.loads`` on Python 3.10–3.13
(they agree) with a C ``long`` of 64 bits (Linux, macOS).
"""

from __future__ import annotations

import math
import re

from .values import PickleError

# Python's own limit on int(text) (sys.int_info.default_max_str_digits): pickle.load, and so
# torch.load, refuses longer decimal INT and LONG arguments, and int() of them is quadratic
MAX_INT_DIGITS = 4300

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1  # a C long on LP64
# strtol(base 0): C-locale space, a sign, then hex after 0x, octal after 0, else decimal
_STRTOL = re.compile(rb"[ \t\n\v\f\r]*([+-]?)(?:0[xX]([0-9a-fA-F]+)|(0[0-7]*)|([1-9][0-9]*))")
# PyOS_string_to_double: no leading space, no underscores, inf/infinity/nan in any case
_STRTOD = re.compile(
    rb"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)", re.IGNORECASE
)
_POWER_OF_TWO_BASE = re.compile(rb"\s*[+-]?0[xXoObB]")  # int() has no digit limit for these
_NEWLINE = 0x0A


def read_int(line: bytes) -> int:
    """INT: a bool where the line is two characters that strtol reads as 0 or 1 (``00``, ``01``,
    ``+1``, `` 0``), else the number; bools are ints, so the annotation holds."""
    text = _c_string(line, line + b"\n")
    match = _STRTOL.match(text)
    value, end = (_strtol_value(match), match.end()) if match else (0, 0)
    if value is None or (end < len(text) and text[end] != _NEWLINE):
        return _int_base_0(text, "INT")
    return bool(value) if len(line) == 2 and value in (0, 1) else value


def read_long(line: bytes) -> int:
    """LONG: one trailing ``L`` (the byte before the newline) dropped, then ``int(text, 0)``."""
    text = _c_string(line, line[:-1] if line.endswith(b"L") else line + b"\n")
    return _int_base_0(text, "LONG")


def read_float(line: bytes) -> float:
    """FLOAT: the longest number at the start, which must end the line (or meet a NUL)."""
    text = _c_string(line, line + b"\n")
    match = _STRTOD.match(text)
    if match is None or (match.end() < len(text) and text[match.end()] != _NEWLINE):
        raise PickleError("FLOAT argument is not a number (corrupt)")
    value = float(match.group())
    if math.isinf(value) and not match.group().lstrip(b"+-")[:1].isalpha():
        raise PickleError("FLOAT argument is too large for a float (corrupt)")
    return value


def read_memo_key(line: bytes) -> int:
    """GET and PUT: ``int(text)`` in base 10, of the text up to its first NUL."""
    try:
        return int(_c_string(line, line + b"\n"), 10)
    except ValueError:
        raise PickleError("memo key is not a whole number (corrupt)") from None


def _c_string(line: bytes, text: bytes) -> bytes:
    """What C sees of ``text`` (the argument as the opcode prepared it from ``line``): up to its
    first NUL. An empty line is refused, as ``_pickle.c`` refuses lines under two bytes."""
    if not line:
        raise PickleError("has an empty text argument (truncated or corrupt)")
    nul = text.find(b"\0")
    return text if nul < 0 else text[:nul]


def _strtol_value(match: re.Match[bytes]) -> int | None:
    """The value strtol reads, or None where it overflows a C long (strtol sets ERANGE)."""
    sign, hex_digits, octal, decimal = match.groups()
    if len((hex_digits or octal or decimal).lstrip(b"0")) > 22:  # past any long (and int()'s
        return None  # digit limit), however many zeros lead
    value = int(hex_digits, 16) if hex_digits else int(octal, 8) if octal else int(decimal)
    value = -value if sign == b"-" else value
    return value if _LONG_MIN <= value <= _LONG_MAX else None


def _int_base_0(text: bytes, opcode: str) -> int:
    """PyLong_FromString(text, base 0): Python's own int literal rules, spaces around allowed."""
    digits = len(text) - len(text.translate(None, b"0123456789"))
    if digits > MAX_INT_DIGITS and not _POWER_OF_TWO_BASE.match(text):
        raise PickleError(f"holds an integer written with more than {MAX_INT_DIGITS:,} digits")
    try:
        return int(text, 0)
    except ValueError:
        raise PickleError(f"{opcode} argument is not a whole number (corrupt)") from None
