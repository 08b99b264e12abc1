"""The order people expect names in: numbers as numbers (``layers.2`` before ``layers.10``), and
the tensors that differ from the model dtype first. The table and ``list`` use the same order."""

from __future__ import annotations

import re
from collections.abc import Sequence

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


_RANK = {TensorStatus.DIFFERS: 0, TensorStatus.KEPT: 1, TensorStatus.MATCH: 2}


def status_rank(status: TensorStatus) -> int:
    """Differing first, then kept (not floats), then matching."""
    return _RANK[status]


def natural_order(tensors: Sequence[TensorInfo], target: DType) -> list[TensorInfo]:
    """Differing tensors first, each group in natural name order."""
    return sorted(tensors, key=lambda t: (_RANK[tensor_status(t, target)], natural_key(t.name)))
