"""What a cast reports: per tensor the precision it cost (or the scheme it dequantized), and
the totals, what was left out and what a training checkpoint dropped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..json_output import rows_document
from ..quant.layout import QuantizedWeight

if TYPE_CHECKING:
    from ..layout import TensorEntry, TensorInfo
    from .precision import ErrorAccumulator


@dataclass
class TensorCastReport:
    """What casting one tensor cost. Numbers are None when the job ran with ``report=False``."""

    name: str
    from_: str
    to: str
    max_abs_err: float | None = None
    mean_abs_err: float | None = None
    max_rel_err: float | None = None
    overflow: int | None = None
    underflow: int | None = None
    nan: int | None = None
    lossless: bool | None = None
    dequantized: str | None = None  # the scheme whose codes were dequantized (not a dtype cast)
    # the typical relative errors (precision.py defines them); last, so positional use still fits
    mean_rel_err: float | None = None
    rms_rel_err: float | None = None

    def to_json(self) -> dict[str, Any]:
        doc = {
            "name": self.name,
            "from": self.from_,
            "to": self.to,
            "max_abs_err": self.max_abs_err,
            "mean_abs_err": self.mean_abs_err,
            "max_rel_err": self.max_rel_err,
            "mean_rel_err": self.mean_rel_err,
            "rms_rel_err": self.rms_rel_err,
            "overflow": self.overflow,
            "underflow": self.underflow,
            "nan": self.nan,
            "lossless": self.lossless,
        }
        if self.dequantized is not None:
            doc["dequantized"] = self.dequantized
        return doc


@dataclass
class CastReport:
    """One entry per tensor whose dtype changed, in checkpoint order."""

    target: str
    tensors: list[TensorCastReport] = field(default_factory=list)
    # tensors of a pickle that safetensors cannot hold (complex128…): {"name", "why"}, not written
    left_out: list[dict[str, str]] = field(default_factory=list)
    # a training checkpoint cast as its model's weights: what was not written
    training: dict[str, Any] | None = None

    def totals(self) -> dict[str, int]:
        """``tensors_cast``, ``lossless`` and the overflow/underflow/NaN value counts, summed."""
        measured = [t for t in self.tensors if t.overflow is not None]
        return {
            "tensors_cast": len(self.tensors),
            "lossless": sum(1 for t in measured if t.lossless),
            "overflow": sum(t.overflow or 0 for t in measured),
            "underflow": sum(t.underflow or 0 for t in measured),
            "nan": sum(t.nan or 0 for t in measured),
        }

    def _head(self) -> dict[str, Any]:
        head: dict[str, Any] = {"target": self.target, "totals": self.totals()}
        if self.left_out:
            head["left_out"] = self.left_out
        if self.training is not None:
            head["training"] = self.training
        return head

    def to_json(self) -> dict[str, Any]:
        return {**self._head(), "tensors": [t.to_json() for t in self.tensors]}

    def to_json_text(self) -> str:
        """The ``--report`` document: strict JSON, one tensor per line."""
        return rows_document([t.to_json() for t in self.tensors], self._head())


def report_entry(
    e: TensorEntry, src: TensorInfo | QuantizedWeight, acc: ErrorAccumulator | None
) -> TensorCastReport:
    if isinstance(src, QuantizedWeight):
        rep = TensorCastReport(e.name, src.stored_dtype, e.dtype.name)
        rep.dequantized = src.scheme.value
    else:
        rep = TensorCastReport(e.name, src.dtype.name, e.dtype.name)
    if acc is not None:
        s = acc.result()
        rep.max_abs_err = s.max_abs_err
        rep.mean_abs_err = s.mean_abs_err
        rep.max_rel_err = s.max_rel_err
        rep.mean_rel_err = s.mean_rel_err
        rep.rms_rel_err = s.rms_rel_err
        rep.overflow = s.overflow
        rep.underflow = s.underflow
        rep.nan = s.nan
        rep.lossless = s.lossless
    return rep
