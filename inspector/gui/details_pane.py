"""The selected tensor: where it lives, its statistics, and its value / error histograms."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QLabel,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from inspector.core.checkpoint import Checkpoint
from inspector.core.formats.burnpack import burnpack_facts
from inspector.core.formats.burnpack.tensor import BurnQuantInfo
from inspector.core.formats.gguf import GgufBlocksInfo
from inspector.core.layout import TensorInfo
from inspector.core.wording import format_bytes

from .heatmap_view import HeatmapView
from .i18n import translate
from .plots import ErrorHistogramPlot, HistogramPlot
from .precision import BeforeAfter, describe_nonfinite
from .table_text import format_shape
from .value_grid import ValuesView

if TYPE_CHECKING:
    from inspector.core.quant.storage_figures import StorageFigures


def _g(x: float | None) -> str:
    return "—" if x is None else f"{x:.6g}"


class DetailsPane(QWidget):
    FIELDS = (  # keys of ``fields``; shown translated
        QT_TRANSLATE_NOOP("DetailsPane", "Name"),
        QT_TRANSLATE_NOOP("DetailsPane", "DType"),
        QT_TRANSLATE_NOOP("DetailsPane", "Shape"),
        QT_TRANSLATE_NOOP("DetailsPane", "File"),
        QT_TRANSLATE_NOOP("DetailsPane", "Bytes"),
        QT_TRANSLATE_NOOP("DetailsPane", "Range"),
        QT_TRANSLATE_NOOP("DetailsPane", "Mean ± std"),
        QT_TRANSLATE_NOOP("DetailsPane", "NaN / inf"),
        QT_TRANSLATE_NOOP("DetailsPane", "Storage"),
        QT_TRANSLATE_NOOP("DetailsPane", "Param ID"),
        QT_TRANSLATE_NOOP("DetailsPane", "Cast"),
        QT_TRANSLATE_NOOP("DetailsPane", "Reference"),
    )

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 0, 0, 0)
        self.heading = QLabel(translate("DetailsPane", "No tensor selected"))
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
            form.addRow(translate("DetailsPane", name) + ":", lab)
        lay.addLayout(form)
        form.setRowVisible(self.fields["Storage"], False)  # a quantized weight's own figures
        form.setRowVisible(self.fields["Param ID"], False)  # a Burnpack tensor's param_id
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.histogram = HistogramPlot()
        self.error_plot = ErrorHistogramPlot()
        self.splitter.addWidget(self.histogram)
        self.splitter.addWidget(self.error_plot)
        self.splitter.setChildrenCollapsible(False)
        # the histograms, a window of the values, the matrix as an image (gui/values_controller)
        self.view_tabs = QTabWidget()
        self.view_tabs.setDocumentMode(True)
        self.values_view = ValuesView()
        self.heatmap_view = HeatmapView()
        self.view_tabs.addTab(self.splitter, translate("DetailsPane", "Histogram"))
        self.view_tabs.addTab(self.values_view, translate("DetailsPane", "Values"))
        self.view_tabs.addTab(self.heatmap_view, translate("DetailsPane", "Heatmap"))
        lay.addWidget(self.view_tabs, 1)
        self.error_plot.hide()
        self.tensor: TensorInfo | None = None
        self.dtype_text = ""  # the DType line's name: ours, or burn's own (Flex32, Bool(U8))
        self.values_kind: str | None = None
        self.stats: Any = None

    def field(self, name: str) -> str:
        return self.fields[name].text()

    def clear(self) -> None:
        self.tensor = None
        self.stats = None
        self.heading.setText(translate("DetailsPane", "No tensor selected"))
        for lab in self.fields.values():
            lab.setText("")
        self.histogram.clear_data()
        self.error_plot.clear_data()
        self.error_plot.hide()

    def show_tensor(self, ckpt: Checkpoint, t: TensorInfo, status: str) -> None:
        self.tensor = t
        self.values_kind = None
        self.set_storage(None)
        self.stats = None
        self.heading.setText(wrappable(t.name))
        self.heading.setToolTip(clip_middle(t.name, 2000))
        burn = burnpack_facts(ckpt.files[0]) if len(ckpt.files) == 1 else None
        self.dtype_text = t.dtype.name
        if isinstance(t, GgufBlocksInfo):  # its bytes are U8: its type is the block type
            self.dtype_text = t.ggml.name
        if isinstance(t, BurnQuantInfo):  # burn's: their value type (the status says the rest)
            self.dtype_text = t.scheme.value.value
        elif burn is not None and t.name in burn.burn_dtypes:
            self.dtype_text = translate("DetailsPane", "{dtype} (burn: {burn})").format(
                dtype=t.dtype.name, burn=burn.dtype_text(t.name, t.dtype.name)
            )
        self.fields["DType"].setText(f"{self.dtype_text} — {status}")
        pid = burn.param_ids.get(t.name) if burn is not None else None
        self.fields["Param ID"].setText("" if pid is None else str(pid))
        self.form.setRowVisible(self.fields["Param ID"], pid is not None)
        self.fields["Shape"].setText(
            translate("DetailsPane", "{shape} · {n} values").format(
                shape=format_shape(t.shape), n=f"{t.numel:,}"
            )
        )
        rel = os.path.basename(t.file)
        self.fields["File"].setText(wrappable(rel))
        self.fields["File"].setToolTip(t.file)
        start, end = ckpt.byte_range(t)
        text = f"{start:,} – {end:,} ({format_bytes(t.nbytes)})"
        strides = getattr(t, "strides", None)  # a pickle's transposed or sliced tensor
        if strides:
            text = translate(
                "DetailsPane", "from {start:,}, a strided view (strides {s}), {size}"
            ).format(start=start, s=list(strides), size=format_bytes(t.nbytes))
        self.fields["Bytes"].setText(text)
        for k in ("Range", "Mean ± std", "NaN / inf"):
            self.fields[k].setText(translate("DetailsPane", "computing…"))
        self.fields["Cast"].setText(translate("DetailsPane", "not cast yet (Ctrl+S)"))
        self.set_reference(None)
        self.histogram.clear_data(translate("DetailsPane", "Values (computing…)"))
        self.error_plot.clear_data()
        self.error_plot.hide()

    def set_status(self, text: str) -> None:
        """The DType line after the model dtype changed: ``F64 — differs: F64 → F16``."""
        if self.tensor is not None:
            self.fields["DType"].setText(f"{self.dtype_text} — {text}")

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
            self.histogram.set_values(
                edges,
                counts,
                translate("DetailsPane", "Values ({dtype})").format(dtype=self._dtype()),
            )

    def set_stats_error(self, message: str) -> None:
        """The reason once, in the first statistics row: three wrapped copies of a long reason
        pushed the rows under them out of a window at its minimum size."""
        self.fields["Range"].setText(
            translate("DetailsPane", "unavailable: {reason}").format(reason=message)
        )
        for k in ("Mean ± std", "NaN / inf"):
            self.fields[k].setText("—")
        self.histogram.clear_data(translate("DetailsPane", "Values: unavailable"))

    def _dtype(self) -> str:
        if self.values_kind:
            return self.values_kind
        return self.tensor.dtype.name if self.tensor else ""

    def set_storage(self, figures: StorageFigures | None) -> None:
        """A quantized weight's codes and scales figures (None: hide the row)."""
        lab = self.fields["Storage"]
        self.form.setRowVisible(lab, figures is not None)
        if figures is None:
            lab.setText("")
            return
        if figures.codes_possible <= 0:  # GGUF blocks: their scales only, worded by core
            lab.setText(figures.line())
            return
        scales = (
            f"{figures.scale_min:.4g} … {figures.scale_max:.4g}"
            if figures.scale_min is not None and figures.scale_max is not None
            else "–"
        )
        lab.setText(
            translate(
                "DetailsPane",
                "codes used {used} of {possible} · saturated {saturated} · scales {scales} · "
                "{bad} scales 0, negative, inf or NaN",
            ).format(
                used=f"{figures.codes_used:,}",
                possible=f"{figures.codes_possible:,}",
                saturated=f"{figures.saturated:,}",
                scales=scales,
                bad=f"{figures.bad_scales:,}",
            )
        )

    def set_logical(self, name: str, shape: tuple[int, ...], n: int) -> None:
        """A quantized weight shown through its codes: its own name and shape."""
        self.heading.setText(wrappable(name))
        self.heading.setToolTip(clip_middle(name, 2000))
        self.fields["Shape"].setText(
            translate("DetailsPane", "{shape} · {n} values").format(
                shape=format_shape(shape), n=f"{n:,}"
            )
        )

    def set_values_kind(self, text: str | None) -> None:
        """What the numbers are of, when not the stored dtype (``dequantized``)."""
        self.values_kind = text

    def set_cast(self, rep: Any) -> None:
        """The cast report line of this tensor (TensorCastReport) or None."""
        if rep is None:
            return
        if rep.from_ == rep.to:
            not_float = self.tensor is not None and not self.tensor.dtype.is_float
            why = translate("DetailsPane", "not a float" if not_float else "kept")
            self.fields["Cast"].setText(
                translate("DetailsPane", "written unchanged as {dtype} ({why})").format(
                    dtype=rep.to, why=why
                )
            )
            return
        if rep.lossless:
            what = translate("DetailsPane", "lossless (every value exact)")
        elif rep.max_rel_err is None:
            what = translate("DetailsPane", "every value overflowed ({n})").format(
                n=f"{rep.overflow:,}"
            )
        else:
            what = translate(
                "DetailsPane", "rel. err max {rel}, typical (mean) {mean} · max abs. err {abs}"
            ).format(rel=_s(rep.max_rel_err), mean=_s(rep.mean_rel_err), abs=_s(rep.max_abs_err))
        counts = translate("DetailsPane", "overflow {o} · underflow {u} · NaN {n}").format(
            o=f"{rep.overflow:,}", u=f"{rep.underflow:,}", n=f"{rep.nan:,}"
        )
        self.fields["Cast"].setText(f"{rep.from_} → {rep.to}: {what}\n{counts}")

    def set_reference(self, d: Any) -> None:
        """The TensorDiff of this tensor against the reference checkpoint, or None (row hidden)."""
        lab = self.fields["Reference"]
        self.form.setRowVisible(lab, d is not None)
        if d is None:
            lab.setText("")
            return
        stores = translate("DetailsPane", "(reference stores {dtype})").format(dtype=d.dtype_b)
        if d.status == "only_a":
            text = translate("DetailsPane", "not in the reference")
        elif d.status == "only_b":
            text = translate("DetailsPane", "only in the reference")
        elif d.status == "shape_mismatch":
            text = translate("DetailsPane", "shape differs: {a} here, {b} in reference").format(
                a=list(d.shape_a), b=list(d.shape_b)
            )
        elif not d.max_abs_diff:
            text = translate("DetailsPane", "equal values") + " " + stores
        elif d.status == "within_atol":
            text = translate("DetailsPane", "within tolerance: max |Δ| {d}").format(
                d=_s(d.max_abs_diff)
            )
            text += " " + stores
        else:
            text = translate("DetailsPane", "max |Δ| {abs} · max rel. {rel}").format(
                abs=_s(d.max_abs_diff), rel=_s(d.max_rel_diff)
            )
            text += " " + stores
        lab.setText(text)

    def set_before_after(self, ba: BeforeAfter, rep: Any) -> None:
        original = translate("DetailsPane", "original")
        saved = translate("DetailsPane", "saved")
        src, dst = (rep.from_, rep.to) if rep is not None else ("", "")
        title = translate("DetailsPane", "Values before / after the cast")
        if ba.sampled:
            title += translate("DetailsPane", ", every {n}th value").format(n=ba.stride)
        outside = [
            f"{which}: {describe_nonfinite(c)}"
            for which, c in ((original, ba.before_nonfinite), (saved, ba.after_nonfinite))
            if c
        ]
        if ba.before.sum() + ba.after.sum() == 0:
            message = translate("DetailsPane", "No finite values to draw")
            if outside:
                message += f" ({'; '.join(outside)})"
            self.histogram.set_message(title, message)
        else:
            if outside:
                title += translate("DetailsPane", " · not drawn: {what}").format(
                    what="; ".join(outside)
                )
            self.histogram.set_before_after(
                ba.edges, ba.before, ba.after, f"{original} {src}", f"{saved} {dst}", title
            )
        pct = 100.0 * ba.exact / ba.n if ba.n else 100.0
        title = translate("DetailsPane", "Relative error, {pct}% exact").format(pct=f"{pct:.1f}")
        if ba.err_counts.size == 0:
            if ba.overflowed and ba.overflowed + ba.exact >= ba.n:
                message = translate(
                    "DetailsPane", "Every changed value overflowed ({n}): no finite error"
                ).format(n=f"{ba.overflowed:,}")
            elif ba.overflowed:
                message = (
                    translate("DetailsPane", "1 value overflowed; the others are exact")
                    if ba.overflowed == 1
                    else translate("DetailsPane", "{n} values overflowed; the others are exact")
                ).format(n=f"{ba.overflowed:,}")
            else:
                message = translate(
                    "DetailsPane", "100% exact: every saved value equals the original"
                )
            self.error_plot.set_message(title, message)
        else:
            self.error_plot.set_errors(ba.err_edges, ba.err_counts, title)
        self.error_plot.show()


def _s(x: float | None) -> str:
    return "—" if x is None else f"{x:.3g}"


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
