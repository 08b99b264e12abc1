"""Which tensors the filter row lets through: names by words or globs, and "only differing".

Qt-free: the table model asks for one boolean per tensor after each change and keeps the
shown rows itself (a ``QSortFilterProxyModel`` called Python once per row on every reset,
0.2 s of a 200k-tensor window's first paint).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass

from inspector.core.layout import TensorInfo
from inspector.core.status import TensorStatus


@dataclass(frozen=True)
class TensorFilter:
    """What the filter row asks for. ``text`` holds words or globs: any of them matches."""

    text: str = ""
    only_differing: bool = False
    show_companions: bool = False  # a quantized weight's scales, zero points, shapes

    def mask(
        self,
        tensors: Sequence[TensorInfo],
        statuses: Sequence[TensorStatus],
        companions: frozenset[int] = frozenset(),
    ) -> list[bool] | None:
        """One flag per tensor (file order), or None when everything is shown. ``companions``:
        the indices of quantized weights' companions, folded unless ``show_companions``."""
        terms = self.text.lower().split()
        fold = bool(companions) and not self.show_companions
        if not terms and not self.only_differing and not fold:
            return None
        if terms:  # any of the words: "embed lm_head" shows both (a person lists what to see)
            pat = _pattern(terms)
            mask = [pat.match(t.name.lower()) is not None for t in tensors]
        else:
            mask = [True] * len(tensors)
        if self.only_differing:
            differs = TensorStatus.DIFFERS
            mask = [m and s is differs for m, s in zip(mask, statuses, strict=True)]
        if fold:
            for i in companions:
                mask[i] = False
        return mask

    def module_prefix(self) -> str:
        """``model.layers.1.`` when the filter is one module's glob (``model.layers.1.*``, as a
        click in the module tree sets it): the table then names tensors relative to it."""
        terms = self.text.split()
        if len(terms) != 1 or not terms[0].endswith(".*") or len(terms[0]) < 3:
            return ""
        prefix = terms[0][:-1]
        return "" if any(c in prefix for c in "*?[") else prefix


def _pattern(terms: list[str]) -> re.Pattern[str]:
    parts = []
    for term in terms:
        if any(c in term for c in "*?["):
            parts.append(fnmatch.translate(term))  # a glob matches the whole name
        else:
            parts.append("(?s:.*)" + re.escape(term))  # a word: anywhere in the name
    return re.compile("|".join(f"(?:{p})" for p in parts))
