"""The selected tensor: where it lives, its statistics, and its value / error histograms."""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QLabel,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from inspector.core.checkpoint import Checkpoint
from inspector.core.header import TensorInfo
from inspector.core.summary import format_bytes

from .plots import ErrorHistogramPlot, HistogramPlot
from .precision import BeforeAfter, describe_nonfinite
from .table_text import format_shape


def _g(x: float | None) -> str:
    return "—" if x is None else f"{x:.6g}"


class DetailsPane(QWidget):
    FIELDS = (
        "Name",
        "DType",
        "Shape",
        "File",
        "Bytes",
        "Range",
        "Mean ± std",
        "NaN / inf",
        "Cast",
        "Reference",
    )

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 0, 0, 0)
        self.heading = QLabel("No tensor selected")
        f = self.heading.font()
        f.setBold(True)
        self.heading.setFont(f)
        self.heading.setWordWrap(True)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # the pane's width never follows the data: a 2,000-character name wraps, it does not widen
        self.heading.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        lay.addWidget(self.heading)
        form = self.form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setVerticalSpacing(2)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.fields: dict[str, QLabel] = {}
        for name in self.FIELDS[1:]:
            lab = QLabel("")
            lab.setWordWrap(True)
            lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            lab.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            self.fields[name] = lab
            form.addRow(name + ":", lab)
        lay.addLayout(form)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.histogram = HistogramPlot()
        self.error_plot = ErrorHistogramPlot()
        self.splitter.addWidget(self.histogram)
        self.splitter.addWidget(self.error_plot)
        self.splitter.setChildrenCollapsible(False)
        lay.addWidget(self.splitter, 1)
        self.error_plot.hide()
        self.tensor: TensorInfo | None = None
        self.stats: Any = None

    def field(self, name: str) -> str:
        return self.fields[name].text()

    def clear(self) -> None:
        self.tensor = None
        self.stats = None
        self.heading.setText("No tensor selected")
        for lab in self.fields.values():
            lab.setText("")
        self.histogram.clear_data()
        self.error_plot.clear_data()
        self.error_plot.hide()

    def show_tensor(self, ckpt: Checkpoint, t: TensorInfo, status: str) -> None:
        self.tensor = t
        self.stats = None
        self.heading.setText(wrappable(t.name))
        self.heading.setToolTip(clip_middle(t.name, 2000))
        self.fields["DType"].setText(f"{t.dtype.name} — {status}")
        self.fields["Shape"].setText(f"{format_shape(t.shape)} · {t.numel:,} values")
        rel = os.path.basename(t.file)
        self.fields["File"].setText(wrappable(rel))
        self.fields["File"].setToolTip(t.file)
        start, end = ckpt.byte_range(t)
        self.fields["Bytes"].setText(f"{start:,} – {end:,} ({format_bytes(t.nbytes)})")
        for k in ("Range", "Mean ± std", "NaN / inf"):
            self.fields[k].setText("computing…")
        self.fields["Cast"].setText("not cast yet (Ctrl+S)")
        self.set_reference(None)
        self.histogram.clear_data("Values (computing…)")
        self.error_plot.clear_data()
        self.error_plot.hide()

    def set_status(self, text: str) -> None:
        """The DType line after the model dtype changed: ``F64 — differs: F64 → F16``."""
        if self.tensor is not None:
            self.fields["DType"].setText(f"{self.tensor.dtype.name} — {text}")

    def set_cast_text(self, text: str) -> None:
        self.fields["Cast"].setText(text)

    def set_error_plot_message(self, text: str) -> None:
        self.error_plot.clear_data(text)

    def set_stats(self, stats: Any, edges: Any, counts: Any) -> None:
        self.stats = stats
        self.fields["Range"].setText(f"{_g(stats.min)} … {_g(stats.max)}")
        self.fields["Mean ± std"].setText(f"{_g(stats.mean)} ± {_g(stats.std)}")
        self.fields["NaN / inf"].setText(f"{stats.nan:,} / {stats.inf:,}")
        if self.histogram.mode != "before_after":
            self.histogram.set_values(edges, counts, f"Values ({self._dtype()})")

    def set_stats_error(self, message: str) -> None:
        for k in ("Range", "Mean ± std", "NaN / inf"):
            self.fields[k].setText(f"unavailable: {message}")
        self.histogram.clear_data("Values: unavailable")

    def _dtype(self) -> str:
        return self.tensor.dtype.name if self.tensor else ""

    def set_cast(self, rep: Any) -> None:
        """The cast report line of this tensor (TensorCastReport) or None."""
        if rep is None:
            return
        if rep.from_ == rep.to:
            why = (
                "not a float"
                if self.tensor is not None and not self.tensor.dtype.is_float
                else "kept"
            )
            self.fields["Cast"].setText(f"written unchanged as {rep.to} ({why})")
            return
        head = f"{rep.from_} → {rep.to}: "
        if rep.lossless:
            head += "lossless (every value exact)"
        elif rep.max_rel_err is None:
            head += f"every value overflowed ({rep.overflow:,})"
        else:
            head += f"max rel. err {_s(rep.max_rel_err)} · max abs. err {_s(rep.max_abs_err)}"
        self.fields["Cast"].setText(
            f"{head}\noverflow {rep.overflow:,} · underflow {rep.underflow:,} · NaN {rep.nan:,}"
        )

    def set_reference(self, d: Any) -> None:
        """The TensorDiff of this tensor against the reference checkpoint, or None (row hidden)."""
        lab = self.fields["Reference"]
        self.form.setRowVisible(lab, d is not None)
        if d is None:
            lab.setText("")
            return
        if d.status in ("only_a", "only_b"):
            lab.setText("not in the reference" if d.status == "only_a" else "only in the reference")
        elif d.status == "shape_mismatch":
            lab.setText(f"shape differs: {list(d.shape_a)} here, {list(d.shape_b)} in reference")
        elif not d.max_abs_diff:
            lab.setText(f"equal values (reference stores {d.dtype_b})")
        elif d.status == "within_atol":
            lab.setText(
                f"within tolerance: max |Δ| {_s(d.max_abs_diff)} (reference stores {d.dtype_b})"
            )
        else:
            lab.setText(
                f"max |Δ| {_s(d.max_abs_diff)} · max rel. {_s(d.max_rel_diff)} "
                f"(reference stores {d.dtype_b})"
            )

    def set_before_after(self, ba: BeforeAfter, rep: Any) -> None:
        src, dst = (rep.from_, rep.to) if rep is not None else ("original", "saved")
        sampled = f", every {ba.stride}th value" if ba.sampled else ""
        outside = [
            f"{which}: {describe_nonfinite(c)}"
            for which, c in (("original", ba.before_nonfinite), ("saved", ba.after_nonfinite))
            if c
        ]
        note = f" · not drawn: {'; '.join(outside)}" if outside else ""
        if ba.before.sum() + ba.after.sum() == 0:
            self.histogram.set_message(
                f"Values before / after the cast{sampled}",
                "No finite values to draw" + (f" ({'; '.join(outside)})" if outside else ""),
            )
        else:
            self.histogram.set_before_after(
                ba.edges,
                ba.before,
                ba.after,
                f"original {src}",
                f"saved {dst}",
                f"Values before / after the cast{sampled}{note}",
            )
        pct = 100.0 * ba.exact / ba.n if ba.n else 100.0
        title = f"Relative error of saved values — {pct:.1f}% exact"
        if ba.err_counts.size == 0:
            if ba.overflowed and ba.overflowed + ba.exact >= ba.n:
                message = f"Every changed value overflowed ({ba.overflowed:,}): no finite error"
            elif ba.overflowed:
                message = f"{ba.overflowed:,} values overflowed; the others are exact"
            else:
                message = "100% exact: every saved value equals the original"
            self.error_plot.set_message(title, message)
        else:
            self.error_plot.set_errors(ba.err_edges, ba.err_counts, title)
        self.error_plot.show()


def _s(x: float | None) -> str:
    return "—" if x is None else f"{x:.3g}"


def _short(name: str, n: int = 40) -> str:
    return name if len(name) <= n else "…" + name[-(n - 1) :]


_BREAK_AFTER = str.maketrans({c: c + "\u200b" for c in "._/-:"})


def clip_middle(text: str, limit: int) -> str:
    """At most ``limit`` characters, the middle elided (both ends of a name tell it apart)."""
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return text[:half] + "…" + text[len(text) - half :]


def wrappable(name: str, limit: int = 400) -> str:
    """A name a word-wrapping label can break: after dots and underscores, and inside long runs."""
    text = clip_middle(name, limit).translate(_BREAK_AFTER)
    runs = text.split("\u200b")
    return "\u200b".join(
        "\u200b".join(r[i : i + 32] for i in range(0, len(r), 32)) if len(r) > 32 else r
        for r in runs
    )
