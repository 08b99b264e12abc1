"""The fast path for well-formed headers: decode straight into TensorInfo structs in C (msgspec).

A 200k-tensor header is ~22 MB of JSON; stdlib ``json`` spends most of a second allocating a
million small objects. msgspec validates types while decoding and builds the final structs
directly. This path only *accepts*: anything it cannot judge exactly like the reference loader
returns ``None`` and goes to the careful parser in ``header.py``, which words the reason.
"""

from __future__ import annotations

import gc
import math
import re

import msgspec

from .dtypes import DTYPES
from .header import Header, TensorInfo

_TENSORS = msgspec.json.Decoder(dict[str, TensorInfo])
_BITS = {name: d.bits for name, d in DTYPES.items()}
# a number "-0" (serde reads it as a float, so not a valid size): the careful path decides
_NEGATIVE_ZERO = re.compile(rb"[\[,:]\s*-0")


class _Top(msgspec.Struct):
    metadata: dict[str, str] | None = msgspec.field(default=None, name="__metadata__")


_TOP = msgspec.json.Decoder(_Top)


def parse_fast(path: str, raw: bytes, *, data_start: int, file_size: int) -> Header | None:
    """A validated Header for an ordinary, valid header; ``None`` for anything else."""
    gc_was_enabled = gc.isenabled()
    gc.disable()  # a million small acyclic objects: collections during the decode only cost time
    try:
        try:
            entries = _TENSORS.decode(raw)
            metadata = None
            has_meta = "__metadata__" in entries
            if has_meta:
                metadata = _TOP.decode(raw).metadata
                del entries["__metadata__"]
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        n = len(entries)
        # The colon count proves the text holds exactly three fields per tensor and string
        # metadata: each entry has all three (checked below), so one colon more would be a
        # repeated or unknown field, or nesting the reference might judge differently. A colon
        # inside a name also trips it; such rare headers take the careful path.
        if (
            raw.count(b":") != 4 * n + (1 + len(metadata or ()) if has_meta else 0)
            or b"\\u" in raw
            or (b"-0" in raw and _NEGATIVE_ZERO.search(raw))
        ):
            return None
        tensors = list(entries.values())
        # one pass names the tensors and checks the layout when offsets ascend (the usual case)
        pos = 0
        bits_of = _BITS
        prod = math.prod
        for name, t in entries.items():
            offsets = t.data_offsets
            if t.dtype_name is None or t.shape is None or offsets is None:
                return None
            t.name = name
            t.file = path
            start, end = offsets
            numel = prod(t.shape)
            if start != pos or numel * bits_of[t.dtype_name] != (end - start) * 8:
                return None  # out of order, or invalid: the careful path sorts and explains
            if numel == 0:
                return None  # [2**63, 2, 0] overflows in the reference before reaching the 0
            pos = end
        if pos != file_size - data_start:
            return None
        return Header(path, tensors, metadata, data_start, file_size, by_name=entries)
    finally:
        if gc_was_enabled:
            gc.enable()
