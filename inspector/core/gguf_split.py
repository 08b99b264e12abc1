"""A GGUF split series (``model-00001-of-00003.gguf`` …, llama.cpp's ``gguf-split``): the file
a person opened and its siblings, read as one checkpoint.

Each file has a header of its own; the first carries ``split.count`` and every file its
``split.no``. The siblings are found by llama.cpp's naming, checked against those keys, and
their tensor names must not repeat; the tensors keep the series' order.
"""

from __future__ import annotations

import os
import re

from .errors import CheckpointError
from .formats.gguf import gguf_facts
from .layout import Header

_NAME = re.compile(r"^(?P<prefix>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")


def split_series(header: Header, read: object) -> list[Header] | None:
    """Every file of the series ``header`` belongs to, in order; None for a single file.
    ``read(path)`` reads one file's header (the opener's, with its identity checks)."""
    facts = gguf_facts(header)
    count = facts.kv.get("split.count") if facts is not None else None
    if not isinstance(count, int) or count <= 1:
        return None
    path = header.path
    folder, base = os.path.split(path)
    m = _NAME.match(base)
    if m is None or int(m["count"]) != count:
        raise CheckpointError(
            path,
            f"is part {facts.kv.get('split.no', '?')} of a {count}-file GGUF split series, but "
            "its name is not llama.cpp's <name>-00001-of-0000N.gguf, so its siblings cannot be "
            "found",
        )
    headers = []
    for no in range(count):
        sibling = os.path.join(folder, f"{m['prefix']}-{no + 1:05d}-of-{count:05d}.gguf")
        h = header if sibling == path else _read_part(sibling, read, path)
        f = gguf_facts(h)
        if f is None or f.kv.get("split.no", 0 if no == 0 else None) != no:
            raise CheckpointError(sibling, f"is not part {no + 1} of {count} of the split series")
        headers.append(h)
    for h in headers[1:]:
        other = gguf_facts(h).kv.get("split.count")  # type: ignore[union-attr]
        if other != count:
            raise CheckpointError(h.path, f"says split.count {other!r}; the series has {count}")
    want = facts.kv.get("split.tensors.count")
    have = sum(len(h.tensors) for h in headers)
    if isinstance(want, int) and want != have:
        raise CheckpointError(
            path,
            f"the series should hold {want:,} tensors (split.tensors.count) but its parts hold "
            f"{have:,}: a part from another series?",
        )
    names: set[str] = set()
    for h in headers:
        for t in h.tensors:
            if t.name in names:
                raise CheckpointError(h.path, f"tensor {t.name!r} is also in another part")
            names.add(t.name)
    return headers


def _read_part(sibling: str, read: object, opened: str) -> Header:
    if not os.path.exists(sibling):
        raise CheckpointError(
            opened, f"its split series is incomplete: {os.path.basename(sibling)} is missing"
        )
    return read(sibling)  # type: ignore[operator]
