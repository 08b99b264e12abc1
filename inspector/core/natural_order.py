"""The order people expect names in: numbers as numbers (``layers.2`` before ``layers.10``), and
the tensors that differ from the model dtype first. The table and ``list`` use the same order."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

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


def natural_keys(names: Iterable[str]) -> list[str]:
    """``natural_key`` of each name, twice as fast for many: digit runs never span a dot, so the
    key of a name is the keys of its parts joined, and the parts repeat from name to name."""
    part = _PartKeys().__getitem__
    return [".".join(map(part, name.split("."))) for name in names]


_RANK = {TensorStatus.DIFFERS: 0, TensorStatus.KEPT: 1, TensorStatus.MATCH: 2}


def status_rank(status: TensorStatus) -> int:
    """Differing first, then kept (not floats), then matching."""
    return _RANK[status]


def natural_order(tensors: Sequence[TensorInfo], target: DType) -> list[TensorInfo]:
    """Differing tensors first, each group in natural name order."""
    keys = natural_keys(t.name for t in tensors)
    ranks = [_RANK[tensor_status(t, target)] for t in tensors]
    order = sorted(range(len(tensors)), key=lambda i: (ranks[i], keys[i]))
    return [tensors[i] for i in order]
