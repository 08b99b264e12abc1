"""The tabs under the table: what loaders do (hint), precision lost by the cast, difference to the
reference. Each tab shows only when it has something to say."""

from __future__ import annotations

import enum
import os
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QTabWidget, QWidget

from inspector.core.wording import format_bytes

from .hint_panel import HintPanel
from .i18n import translate
from .lint_panel import LintPanel
from .metadata_panel import MetadataPanel
from .overview_plot import OverviewPanel, OverviewPlot
from .pickle_panel import PicklePanel
from .table_text import cast_error_value

if TYPE_CHECKING:
    from inspector.core.checkpoint import Checkpoint
    from inspector.core.diff import DiffSummary, TensorDiff
    from inspector.core.formats.burnpack import BurnpackFacts
    from inspector.core.formats.torch_pickle import PickleFacts
    from inspector.core.model_folder.findings import Finding
    from inspector.core.quantize.report import QuantizeReport
    from inspector.core.summary import Summary
    from inspector.session import CastResult


class PlotTab(enum.IntEnum):
    """The tabs under the table, by position."""

    HINT = 0
    CAST = 1
    DIFF = 2
    PICKLE = 3
    LINT = 4
    METADATA = 5


class PlotTabs(QTabWidget):
    sig_tensor_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDocumentMode(True)
        self.hint = HintPanel()
        self.precision_plot = OverviewPlot(
            title=translate("PlotTabs", "Relative error per tensor"),
            ylabel=translate("PlotTabs", "max ●, mean ■"),
            labels=(translate("PlotTabs", "max (largest)"), translate("PlotTabs", "lossless")),
        )
        self.diff_plot = OverviewPlot(
            title=translate("PlotTabs", "Max |Δ| per tensor vs reference"),
            ylabel="max |Δ|",
            labels=(translate("PlotTabs", "differs"), translate("PlotTabs", "equal")),
        )
        self.precision_panel = OverviewPanel(self.precision_plot)
        self.diff_panel = OverviewPanel(self.diff_plot)
        self.precision_plot.tensor_clicked.connect(self.sig_tensor_clicked)
        self.diff_plot.tensor_clicked.connect(self.sig_tensor_clicked)
        self.addTab(self.hint, translate("PlotTabs", "Why it matters"))
        self._cast_tab_text = translate("PlotTabs", "Precision lost (cast)")
        self.addTab(self.precision_panel, self._cast_tab_text)
        self.addTab(self.diff_panel, translate("PlotTabs", "Difference to reference"))
        self.pickle_panel = PicklePanel()
        self.addTab(self.pickle_panel, translate("PlotTabs", "Pickle"))
        self.lint_panel = LintPanel()
        self.addTab(self.lint_panel, translate("PlotTabs", "Lint"))
        self.metadata_panel = MetadataPanel()
        self.addTab(self.metadata_panel, translate("PlotTabs", "Metadata"))
        self._showing_preview = False  # the precision tab holds a quantize preview, not a cast
        self.hide()

    # ---- public API -----------------------------------------------------------------------
    def set_summary(self, summary: Summary | None) -> None:
        self.hint.update_summary(summary)

    def set_burn_source(self, path: str, fmt: str, metadata: dict[str, str] | None) -> None:
        """What the open checkpoint is, for burn-store's loading line in the hint."""
        self.hint.set_source(path, fmt, metadata)

    def set_cast(self, cast: CastResult | None, ckpt: Checkpoint | None) -> None:
        """Per-tensor max relative error of the last cast, in file order (or nothing)."""
        if cast is None or ckpt is None:
            if not self._showing_preview:
                self.precision_plot.clear_data()
            return
        self._showing_preview = False
        self.setTabText(PlotTab.CAST.value, self._cast_tab_text)
        self.precision_plot.set_ylabel(translate("PlotTabs", "max ●, mean ■"))
        rep = cast.report
        by_name = {r.name: r for r in rep.tensors if r.from_ != r.to}
        names = [t.name for t in ckpt.tensors]
        rows = [by_name.get(n) for n in names]
        values = [cast_error_value(r) for r in rows]
        n_changed = sum(v is not None for v in values)
        n_lossless = sum(v == 0 for v in values if v is not None)
        totals = rep.totals()
        self.precision_plot.set_values(
            names,
            values,
            translate(
                "PlotTabs", "Relative error per tensor, cast to {target}: largest and typical"
            ).format(target=rep.target),
            typical=[r.mean_rel_err if r is not None else None for r in rows],
            underflow=[r is not None and bool(r.underflow) and r.max_rel_err == 1 for r in rows],
        )
        out = os.path.basename(cast.output_path.rstrip(os.sep))
        self.precision_panel.set_caption(
            (
                translate(
                    "PlotTabs",
                    "<b>1 tensor cast to {target}</b> ({out}): {lossless} lossless · "
                    "overflow {o} · underflow {u} · NaN {nan}",
                )
                if n_changed == 1
                else translate(
                    "PlotTabs",
                    "<b>{n} tensors cast to {target}</b> ({out}): {lossless} lossless · "
                    "overflow {o} · underflow {u} · NaN {nan}",
                )
            ).format(
                n=n_changed,
                target=rep.target,
                out=out,
                lossless=n_lossless,
                o=f"{totals['overflow']:,}",
                u=f"{totals['underflow']:,}",
                nan=f"{totals['nan']:,}",
            )
        )

    def set_quantize_preview(self, report: QuantizeReport | None) -> None:
        """One previewed scheme's relative Frobenius error per weight (nothing is written yet);
        None puts back what was there (the last cast's errors, or nothing)."""
        if report is None:
            if self._showing_preview:
                self._showing_preview = False
                self.precision_plot.clear_data()
                self.setTabText(PlotTab.CAST.value, self._cast_tab_text)
            return
        self._showing_preview = True
        self.setTabText(
            PlotTab.CAST.value,
            translate("PlotTabs", "Precision lost ({scheme} preview)").format(scheme=report.scheme),
        )
        self.precision_plot.set_values(
            [w.name for w in report.weights],
            [w.figures.rel_fro_err for w in report.weights],
            translate("PlotTabs", "{scheme}: relative Frobenius error per weight (preview)").format(
                scheme=report.scheme
            ),
        )
        self.precision_plot.set_ylabel("‖Δ‖ / ‖W‖")
        worst = report.worst(1)
        src = report.bytes_in or 1
        self.precision_panel.set_caption(
            (
                translate(
                    "PlotTabs",
                    "<b>{scheme} would write {size} ({ratio} of the source)</b>: SQNR median "
                    "{median}, worst {worst} ({name}) · 1 weight quantized, {skipped} left as "
                    "they are",
                )
                if len(report.weights) == 1
                else translate(
                    "PlotTabs",
                    "<b>{scheme} would write {size} ({ratio} of the source)</b>: SQNR median "
                    "{median}, worst {worst} ({name}) · {n} weights quantized, {skipped} left as "
                    "they are",
                )
            ).format(
                scheme=report.scheme,
                size=format_bytes(report.bytes_out),
                ratio=f"{report.bytes_out / src:.0%}",
                median=f"{report.median_sqnr_db:.1f} dB" if report.weights else "—",
                worst=f"{report.worst_sqnr_db:.1f} dB" if report.weights else "—",
                name=worst[0].name if worst else "—",
                n=len(report.weights),
                skipped=len(report.skipped),
            )
        )

    def set_diffs(
        self, diffs: list[TensorDiff] | None, summary: DiffSummary | None, ref_name: str
    ) -> None:
        if diffs is None or summary is None:
            self.diff_plot.clear_data()
            return
        in_a = [d for d in diffs if d.status != "only_b"]
        if any(d.quant is not None for d in in_a):  # the precision each quantized weight lost
            self.diff_plot.set_values(
                [d.name for d in in_a],
                [d.rel_fro_err for d in in_a],
                translate(
                    "PlotTabs", "Relative Frobenius error of the dequantized weights vs {ref}"
                ).format(ref=ref_name),
            )
            self.diff_plot.set_ylabel("‖Δ‖ / ‖ref‖")
        else:
            self.diff_plot.set_values(
                [d.name for d in in_a],
                [d.max_abs_diff for d in in_a],
                translate("PlotTabs", "Max |Δ| per tensor vs {ref}").format(ref=ref_name),
            )
            self.diff_plot.set_ylabel("max |Δ|")
        caption = translate(
            "PlotTabs",
            "<b>{n} differing from {ref}</b> (worst max |Δ| {worst}), {equal} equal",
        ).format(
            n=summary.n_differ,
            ref=ref_name,
            worst=f"{summary.worst_abs:.3g}",
            equal=summary.n_equal,
        )
        if summary.n_within:
            caption += translate("PlotTabs", ", {n} within tolerance").format(n=summary.n_within)
        self.diff_panel.set_caption(caption)

    def show_cast(self) -> None:
        self.setCurrentWidget(self.precision_panel)

    def show_diff(self) -> None:
        self.setCurrentWidget(self.diff_panel)

    def mark(self, name: str) -> None:
        self.precision_plot.mark(name)
        self.diff_plot.mark(name)

    def set_pickle(self, facts: PickleFacts | None) -> None:
        self.pickle_panel.set_facts(facts)

    def set_lint(self, findings: list[Finding] | None, folder: str = "") -> None:
        self.lint_panel.set_findings(findings, folder)
        self.setTabText(
            4,
            translate("PlotTabs", "Lint ({n})").format(n=len(findings))
            if findings
            else translate("PlotTabs", "Lint"),
        )

    def set_available(self, tabs: set[PlotTab]) -> bool:
        """Show the tabs that have content; returns whether any does."""
        for tab in PlotTab:
            self.setTabVisible(tab.value, tab in tabs)
        self.setVisible(bool(tabs))
        if PlotTab.CAST not in tabs and PlotTab.DIFF not in tabs:
            for first in (PlotTab.HINT, PlotTab.PICKLE, PlotTab.METADATA):
                if first in tabs:
                    self.setCurrentIndex(first.value)
                    break
        return bool(tabs)

    def set_metadata(
        self,
        metadata: dict | None,
        sharded: bool = False,
        burn: BurnpackFacts | None = None,
        gguf: bool = False,
    ) -> None:
        self.metadata_panel.set_metadata(metadata, sharded, burn, gguf)
