"""File ▸ Export Table… and Export Report…: ask where, write through
:mod:`inspector.session.exports`, say what was written (or why not) in the message bar."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog

from inspector.core.errors import CheckpointError
from inspector.session.exports import ReportKind, export_report, export_table, report_kind

from .errors import error_text
from .i18n import translate

if TYPE_CHECKING:
    from inspector.session import Session

    from .window_views import WindowViews


class ExportActions(QObject):
    def __init__(self, session: Session, views: WindowViews, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session, self.views = session, views
        views.actions.export_table.triggered.connect(self._on_view_export_table)
        views.actions.export_report.triggered.connect(self._on_view_export_report)

    def export_table(self, path: str) -> bool:
        return self._write(path, lambda: export_table(self.session, path))

    def export_report(self, path: str) -> bool:
        return self._write(path, lambda: export_report(self.session, path))

    def _write(self, path: str, write) -> bool:
        try:
            write()
        except (CheckpointError, OSError) as e:
            self.views.show_error(
                translate("Export", "Could not export {what}").format(what=error_text(path, e))
            )
            return False
        self.views.message_bar.show_message(
            translate("Export", "Wrote {name}.").format(name=os.path.basename(path)), "ok"
        )
        return True

    def _start(self, name: str) -> str:
        base = os.path.dirname(self.session.path or "") or os.path.expanduser("~")
        return os.path.join(base, name)

    def _on_view_export_table(self) -> None:
        if self.session.checkpoint is None:
            return
        stem = os.path.basename((self.session.path or "table").rstrip(os.sep)).split(".")[0]
        path, _ = QFileDialog.getSaveFileName(
            self.views.dialog_parent,
            translate("Export", "Export table"),
            self._start(f"{stem}.tensors.csv"),
            translate("Export", "CSV (*.csv);;JSON, as list --json (*.json)"),
        )
        if path:
            self.export_table(path)

    def _on_view_export_report(self) -> None:
        kind = report_kind(self.session)
        if kind is None:
            return
        name = "comparison.json" if kind is ReportKind.COMPARISON else "cast-report.json"
        path, _ = QFileDialog.getSaveFileName(
            self.views.dialog_parent,
            translate("Export", "Export report"),
            self._start(name),
            "JSON (*.json)",
        )
        if path:
            self.export_report(path)
