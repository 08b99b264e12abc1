"""The quantize preview of the shown checkpoint: each scheme's report, and the one whose
per-tensor errors the precision tab shows (the person picks it in the Quantize dialog)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inspector.core.checkpoint import Checkpoint
    from inspector.core.quantize.report import QuantizeReport


@dataclass
class QuantizePreview:
    reports: list[QuantizeReport]
    source: Checkpoint
    ignore: tuple[str, ...]
    shown: str | None = None  # the scheme in the precision tab

    def report(self, scheme: str | None) -> QuantizeReport | None:
        return next((r for r in self.reports if r.scheme == scheme), None)

    @property
    def shown_report(self) -> QuantizeReport | None:
        return self.report(self.shown)
