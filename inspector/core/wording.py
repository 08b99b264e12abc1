"""How header problems are worded: names quoted and clipped, JSON values shown short."""

from __future__ import annotations

import json
from typing import Any


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _q(name: object) -> str:
    """A tensor or key name for a message: quoted, and clipped so one line stays one line."""
    return _clip(repr(name), 80)


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
