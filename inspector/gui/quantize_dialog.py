"""Quantize…: the data-free schemes side by side (size, median and worst SQNR, the worst weights),
measured before anything is written; a row's click shows that scheme's per-weight errors in the
precision tab, Save writes the chosen one. A view: it says what the person asked for in signals
and shows what it is given through ``set_*``."""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.quantize.schemes import SCHEMES
from inspector.core.wording import format_bytes
from inspector.gui.cast_dialog import parse_keep
from inspector.gui.i18n import translate

if TYPE_CHECKING:
    from inspector.core.checkpoint import Checkpoint
    from inspector.core.quantize.report import QuantizeReport


def proposed_quantized_output(ckpt: Checkpoint, scheme: str) -> str:
    """``<model folder>-<scheme>`` beside the model (a quantized model is always a folder)."""
    if ckpt.is_sharded or ckpt.folder is not None:
        base = ckpt.folder or os.path.dirname(os.path.abspath(ckpt.index_path or ckpt.path))
    else:
        base = os.path.splitext(os.path.abspath(ckpt.files[0].path))[0]
    return f"{os.path.abspath(base).rstrip(os.sep)}-{scheme}"


def short_name(name: str) -> str:
    """``model.layers.2.mlp.down_proj.weight`` as ``layers.2.mlp.down_proj``: the part that
    tells weights apart."""
    name = name.removesuffix(".weight")
    return name.removeprefix("model.")


def db_text(x: float | None) -> str:
    if x is None:
        return "—"
    return translate("QuantizeDialog", "lossless") if math.isinf(x) and x > 0 else f"{x:.1f} dB"


class QuantizeDialog(QDialog):
    sig_scheme_chosen = Signal(str)  # a row was selected: show its per-weight errors
    sig_preview_requested = Signal(object)  # the ignore globs changed: measure again
    sig_save_requested = Signal(str, str, object)  # scheme, output folder, ignore globs

    def __init__(self, ckpt: Checkpoint, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ckpt = ckpt
        self.setWindowTitle(translate("QuantizeDialog", "Quantize"))
        self.setMinimumWidth(720)
        self._reports: dict[str, QuantizeReport] = {}
        self._auto_out = ""
        lay = QVBoxLayout(self)
        intro = QLabel(
            translate(
                "QuantizeDialog",
                "Data-free quantization of the Linear weights with llm-compressor's presets, "
                "written as compressed-tensors (vLLM and transformers load it). The precision "
                "each scheme loses is measured first; nothing is written until you save.",
            )
        )
        intro.setWordWrap(True)
        lay.addWidget(intro)
        headers = [
            translate("QuantizeDialog", "Scheme"),
            translate("QuantizeDialog", "Size"),
            translate("QuantizeDialog", "Median SQNR"),
            translate("QuantizeDialog", "Worst SQNR"),
            translate("QuantizeDialog", "Worst weights (SQNR)"),
        ]
        self.table = QTableWidget(len(SCHEMES), len(headers))
        self.table.setHorizontalHeaderLabels(headers)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        for col in range(len(headers) - 1):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(headers) - 1, QHeaderView.ResizeMode.Stretch)
        for row, name in enumerate(SCHEMES):
            self.table.setItem(row, 0, QTableWidgetItem(name))
            for col in range(1, len(headers)):
                self.table.setItem(row, col, QTableWidgetItem("…"))
        self.table.itemSelectionChanged.connect(self._on_selection)
        lay.addWidget(self.table, 1)
        self.status = QLabel()
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        form = QFormLayout()
        self.ignore_edit = QLineEdit("lm_head")
        self.ignore_edit.setToolTip(
            translate(
                "QuantizeDialog",
                "Linear modules left as they are: names, globs (model.layers.0.*) or re:regex",
            )
        )
        self.ignore_edit.editingFinished.connect(self._on_ignore_edited)
        self._ignore_measured = self.ignore
        self.out_edit = QLineEdit()
        browse = QPushButton(translate("QuantizeDialog", "Browse…"))
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.out_edit, 1)
        row.addWidget(browse)
        form.addRow(translate("QuantizeDialog", "Leave as they are:"), self.ignore_edit)
        form.addRow(translate("QuantizeDialog", "Save into folder:"), row)
        lay.addLayout(form)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.save_button = self.buttons.addButton(
            translate("QuantizeDialog", "Save"), QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.save_button.setEnabled(False)
        self.save_button.clicked.connect(self._on_save)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self.out_edit.textChanged.connect(self._update_save)

    # -- values -----------------------------------------------------------------------------
    @property
    def ignore(self) -> tuple[str, ...]:
        return parse_keep(self.ignore_edit.text())

    @property
    def scheme(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return self.table.item(rows[0].row(), 0).text() if rows else None

    @property
    def output(self) -> str:
        return os.path.abspath(os.path.expanduser(self.out_edit.text().strip()))

    # -- set_* ------------------------------------------------------------------------------
    def set_measuring(self, on: bool) -> None:
        if on:
            self.status.setText(
                translate("QuantizeDialog", "Measuring the six schemes… (progress below)")
            )
        self.table.setEnabled(not on)
        self._update_save()

    def set_reports(self, reports: list[QuantizeReport]) -> None:
        """Fill the rows and select the first scheme measured, so the precision tab shows its
        errors at once."""
        self._reports = {r.scheme: r for r in reports}
        self.table.setEnabled(True)
        src = reports[0].bytes_in if reports else 0
        for row, name in enumerate(SCHEMES):
            r = self._reports.get(name)
            cells = ["—"] * 4
            if r is not None and r.weights:
                worst = "\n".join(f"{short_name(w.name)}  {db_text(w.sqnr_db)}" for w in r.worst())
                ratio = r.bytes_out / src if src else 1.0
                cells = [
                    f"{format_bytes(r.bytes_out)} ({ratio:.0%})",
                    db_text(r.median_sqnr_db),
                    db_text(r.worst_sqnr_db),
                    worst,
                ]
            for col, text in enumerate(cells, start=1):
                item = QTableWidgetItem(text)
                if col in (1, 2, 3):
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                item.setToolTip(text)
                self.table.setItem(row, col, item)
        self.table.resizeRowsToContents()
        rows_height = sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        frame = 2 * self.table.frameWidth()
        self.table.setMinimumHeight(rows_height + self.table.horizontalHeader().height() + frame)
        self.adjustSize()
        n = max((len(r.weights) for r in reports), default=0)
        skipped = max((len(r.skipped) for r in reports), default=0)
        self.status.setText(
            (
                translate(
                    "QuantizeDialog",
                    "1 Linear weight measured, {skipped} left as they are; source {size}. "
                    "Click a scheme to see its error per weight in the precision tab.",
                )
                if n == 1
                else translate(
                    "QuantizeDialog",
                    "{n} Linear weights measured, {skipped} left as they are; source {size}. "
                    "Click a scheme to see its error per weight in the precision tab.",
                )
            ).format(n=n, skipped=skipped, size=format_bytes(src))
        )
        self._ignore_measured = self.ignore
        usable = [r for r in reports if r.weights]
        if usable and self.scheme not in self._reports:
            self.table.selectRow(list(SCHEMES).index(usable[0].scheme))
        elif self.scheme is not None:
            self.sig_scheme_chosen.emit(self.scheme)
        self._update_save()

    def set_failed(self, text: str) -> None:
        self.status.setText(f"<b>{text}</b>")
        self.table.setEnabled(True)
        self._update_save()

    # -- slots ------------------------------------------------------------------------------
    def _on_selection(self) -> None:
        scheme = self.scheme
        if scheme is None:
            return
        if not self.out_edit.text() or self.out_edit.text() == self._auto_out:
            self._auto_out = proposed_quantized_output(self.ckpt, scheme)
            self.out_edit.setText(self._auto_out)
        if scheme in self._reports:
            self.sig_scheme_chosen.emit(scheme)
        self._update_save()

    def _on_ignore_edited(self) -> None:
        if self.ignore != self._ignore_measured:
            self.sig_preview_requested.emit(self.ignore)

    def _on_save(self) -> None:
        if self.scheme is not None:
            self.sig_save_requested.emit(self.scheme, self.output, self.ignore)
            self.accept()

    def _update_save(self) -> None:
        r = self._reports.get(self.scheme or "")
        ok = (
            r is not None
            and bool(r.weights)
            and bool(self.out_edit.text().strip())
            and self.table.isEnabled()
            and os.path.isdir(os.path.dirname(self.output))
        )
        self.save_button.setEnabled(ok)

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(
            self, translate("QuantizeDialog", "Save the quantized model into folder"), self.output
        )
        if path:
            self.out_edit.setText(path)
