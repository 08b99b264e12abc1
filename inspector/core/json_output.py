"""Strict JSON documents with one tensor per line: the layout of ``list --json``, ``diff --json``
and ``cast --report`` alike (greppable, diffable, and valid for any strict parser)."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from .collector_pause import collector_paused

T = TypeVar("T")
JSON_DEPTH = 1000  # levels of nesting every JSON step (decode, encode) handles, wherever called


def with_depth_room(fn: Callable[..., T], *args: object) -> T:
    """Run a recursive JSON step with room for ``JSON_DEPTH`` levels below the caller's frame.

    Python's recursion limit counts the caller's own frames too, so without this the same index
    would open in ``list`` and fail in ``cast`` (called from deeper in the stack).
    """
    depth = 0
    f = sys._getframe()
    while f is not None:
        depth += 1
        f = f.f_back
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, depth + JSON_DEPTH + 50))
    try:
        return fn(*args)
    finally:
        sys.setrecursionlimit(old)


def json_safe(value: object) -> object:
    """Strict JSON has no inf/NaN: they are written as the strings "inf", "-inf", "nan".

    Iterative, so metadata nested hundreds of levels deep cannot exhaust the stack.
    """
    root: list[object] = [value]
    stack: list[tuple[object, object]] = [(root, 0)]
    while stack:
        parent, key = stack.pop()
        v = parent[key]  # type: ignore[index]
        if isinstance(v, float) and not math.isfinite(v):
            parent[key] = "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")  # type: ignore[index]
        elif isinstance(v, dict):
            v = dict(v)
            parent[key] = v  # type: ignore[index]
            stack.extend((v, k) for k in v)
        elif isinstance(v, (list, tuple)):
            v = list(v)
            parent[key] = v  # type: ignore[index]
            stack.extend((v, i) for i in range(len(v)))
    return root[0]


def json_text(value: object) -> str:
    """Compact strict JSON of any value (metadata may nest deeply: room is made for it)."""
    import msgspec

    return with_depth_room(msgspec.json.encode, json_safe(value)).decode()


def rows_document(rows: Iterable[Mapping[str, object]], extra: Mapping[str, object]) -> str:
    """``{"tensors": [...], ...}`` with one tensor per line, then the ``extra`` keys.

    A row is flat (its only floats are top-level values), and a big header has 200k of them: all
    are encoded by msgspec into one buffer. msgspec writes a NaN or inf as ``null``, so only a
    row whose text has a ``null`` is looked at again, in Python.
    """
    import msgspec

    encode_into = msgspec.json.Encoder().encode_into
    buf = bytearray(b'{"tensors": [')
    sep = b"\n  "
    with collector_paused():  # rows are acyclic: collections only cost time
        for row in rows:
            buf += sep
            start = len(buf)
            encode_into(row, buf, -1)
            if buf.find(b"null", start) != -1 and _has_nonfinite(row):
                del buf[start:]
                encode_into(json_safe(dict(row)), buf, -1)
            sep = b",\n  "
    buf += b"\n]"
    for k, v in extra.items():
        buf += f", {json.dumps(k)}: {json_text(v)}".encode()
    buf += b"}\n"
    return buf.decode()


def _has_nonfinite(row: Mapping[str, object]) -> bool:
    return any(type(v) is float and not math.isfinite(v) for v in row.values())
