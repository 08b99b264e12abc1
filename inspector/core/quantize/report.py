"""What a quantization did or would do: per weight the bytes and the precision lost, the weights
left out and why, and for a preview the few numbers that tell schemes apart."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from ..json_output import json_text
from ..quant.compare import ErrorFigures
from .targets import QuantizePlan


def _num(x: float | None) -> float | str | None:
    """A JSON number; infinities (an all-zero weight's SQNR) as strings JSON can hold."""
    if x is None or math.isfinite(x):
        return x
    return "inf" if x > 0 else "-inf"


@dataclass
class QuantizedWeightReport:
    name: str
    shape: tuple[int, ...]
    source_dtype: str
    bytes_in: int
    bytes_out: int
    figures: ErrorFigures | None  # None: a save that did not measure

    @property
    def sqnr_db(self) -> float:
        """+inf when nothing was lost (for sorting and medians); NaN when not measured."""
        if self.figures is None:
            return math.nan
        s = self.figures.sqnr_db
        return math.inf if s is None else s

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "name": self.name,
            "shape": list(self.shape),
            "from": self.source_dtype,
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
        }
        f = self.figures
        if f is not None:
            row |= {
                "max_abs_err": f.max_abs,
                "max_rel_err": f.max_rel,
                "rms_rel_err": f.rms_rel_err,
                "rel_fro_err": _num(f.rel_fro_err),
                "sqnr_db": _num(f.sqnr_db),
            }
        return row


@dataclass
class SkippedWeight:
    name: str
    why: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "why": self.why}


def skipped_weights(plan: QuantizePlan) -> list[SkippedWeight]:
    """The Linear weights ``plan`` leaves as they are, each with its reason."""
    return [
        SkippedWeight(s.tensor.name, s.reason.text(s.tensor, plan.scheme)) for s in plan.skipped
    ]


@dataclass
class QuantizeReport:
    """One scheme over one checkpoint. ``bytes_out`` counts every tensor of the output."""

    scheme: str
    bytes_in: int = 0
    bytes_out: int = 0
    weights: list[QuantizedWeightReport] = field(default_factory=list)
    skipped: list[SkippedWeight] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def measured(self) -> bool:
        return any(w.figures is not None for w in self.weights)

    def worst(self, n: int = 3) -> list[QuantizedWeightReport]:
        return sorted(self.weights, key=lambda w: w.sqnr_db)[:n] if self.measured else []

    @property
    def median_sqnr_db(self) -> float | None:
        if not self.measured:
            return None
        return statistics.median(w.sqnr_db for w in self.weights)

    @property
    def worst_sqnr_db(self) -> float | None:
        return min(w.sqnr_db for w in self.weights) if self.measured else None

    def summary_json(self) -> dict[str, Any]:
        return {
            "scheme": self.scheme,
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
            "weights_quantized": len(self.weights),
            "weights_skipped": len(self.skipped),
            "median_sqnr_db": _num(self.median_sqnr_db),
            "worst_sqnr_db": _num(self.worst_sqnr_db),
            "worst": [w.name for w in self.worst()],
        }

    def to_json(self) -> dict[str, Any]:
        return {
            **self.summary_json(),
            "tensors": [w.to_json() for w in self.weights],
            "skipped": [s.to_json() for s in self.skipped],
            "notes": list(self.notes),
        }

    def to_json_text(self) -> str:
        return json_text(self.to_json()) + "\n"
