"""How header problems are worded: names quoted and clipped, JSON values shown short."""

from __future__ import annotations

import json
from typing import Any


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _q(name: object) -> str:
    """A tensor or key name for a message: quoted, and clipped so one line stays one line."""
    try:
        text = repr(name)
    except (ValueError, RecursionError):  # an integer of 5,000 digits, a deep structure
        text = f"<{type(name).__name__}>"
    return _clip(text, 80)


def _dump(v: Any) -> str:
    try:
        text = json.dumps(v, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        text = _json_type(v)
    return _clip(text, 80)  # JSON text holds no raw newline: one line stays one line


def _json_type(v: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(v), type(v).__name__)


def format_bytes(n: int) -> str:
    """Binary units, one decimal: ``86.7 MiB``."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024
        if value < 1023.95 or unit == "PiB":  # what rounds to 1024.0 is the next unit's 1.0
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def byte_count(n: int) -> str:
    """An exact count of bytes, as an error says it: ``1 byte``, ``1,024 bytes``."""
    return f"{n:,} byte" + ("" if n == 1 else "s")
