"""The order people expect names in: numbers as numbers (``layers.2`` before ``layers.10``), and
the tensors that differ from the model dtype first. The table and ``list`` use the same order."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from .dtypes import DType
from .header import TensorInfo
from .status import TensorStatus
from .summary import tensor_status

_DIGITS = re.compile(r"\d+")


def _pad(m: re.Match[str]) -> str:
    run = m.group()
    return chr(0x30 + min(len(run), 200)) + run  # longer digit runs sort after shorter ones


def natural_key(name: str) -> str:
    """``layer.2`` before ``layer.10`` (a plain string key, so sorting stays in C)."""
    return _DIGITS.sub(_pad, name)


class _PartKeys(dict[str, str]):
    """Natural keys of dotted name parts, computed once each: 200k names share a few thousand."""

    def __missing__(self, part: str) -> str:
        key = self[part] = _DIGITS.sub(_pad, part)
        return key


VECTOR_MIN_NAMES = 2000  # below this, numpy's per-call cost outweighs what it saves
_VECTOR_BATCH = 1 << 15  # names per numpy pass: the temporaries stay a few MiB


def natural_keys(names: Iterable[str]) -> list[str]:
    """``natural_key`` of each name. Many ASCII names are keyed in a few numpy passes over their
    joined text (200k names: 0.18 → 0.05 s); otherwise per dotted part, each part keyed once
    (digit runs never span a dot, and the parts repeat from name to name)."""
    names = names if isinstance(names, list) else list(names)
    if len(names) >= VECTOR_MIN_NAMES:
        keys: list[str] = []
        for i in range(0, len(names), _VECTOR_BATCH):
            batch = _ascii_keys(names[i : i + _VECTOR_BATCH])
            if batch is None:
                break
            keys += batch
        else:
            return keys
    part = _PartKeys().__getitem__
    return [".".join(map(part, name.split("."))) for name in names]


def _ascii_keys(names: list[str]) -> list[str] | None:
    """The keys of ASCII names without newlines, built on their joined bytes: the length
    character is inserted before each run of digits. ``None`` for any other list."""
    joined = "\n".join(names)
    if not joined.isascii() or joined.count("\n") != len(names) - 1:
        return None  # a non-ASCII digit, or a newline inside a name: the per-part path
    text = np.frombuffer(joined.encode("ascii"), np.uint8)
    digit = (text - np.uint8(0x30)) < np.uint8(10)  # wraps around below "0"
    edges = np.diff(digit.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edges == 1)
    lengths = np.flatnonzero(edges == -1) - starts
    if lengths.size and int(lengths.max()) >= 0x80 - 0x30:
        return None  # its length character would not be ASCII (_pad caps it at 200)
    keyed = np.insert(text, starts, (lengths + 0x30).astype(np.uint8))
    return keyed.tobytes().decode("ascii").split("\n")


_RANK = {TensorStatus.DIFFERS: 0, TensorStatus.KEPT: 1, TensorStatus.MATCH: 2}


def status_rank(status: TensorStatus) -> int:
    """Differing first, then kept (not floats), then matching."""
    return _RANK[status]


def natural_order(tensors: Sequence[TensorInfo], target: DType) -> list[TensorInfo]:
    """Differing tensors first, each group in natural name order.

    Two sorts keyed in C (names, then the status rank, which keeps the name order within each
    status) and one status per dtype: 200k tensors in ~0.1 s, where a (rank, key) tuple per
    tensor and a status per tensor took ~0.5 s."""
    keys = natural_keys([t.name for t in tensors])
    order = sorted(range(len(tensors)), key=keys.__getitem__)
    samples = {t.dtype_name: t for t in tensors}  # one tensor of each dtype
    rank_of = {name: _RANK[tensor_status(t, target)] for name, t in samples.items()}
    ranks = [rank_of[t.dtype_name] for t in tensors]
    order.sort(key=ranks.__getitem__)
    return [tensors[i] for i in order]
