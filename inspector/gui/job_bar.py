"""The status-bar part that shows the running job: label, progress bar, Cancel."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QStatusBar

from inspector.core.wording import format_bytes

from .i18n import translate

if TYPE_CHECKING:
    from inspector.core.progress import Progress


class JobBar:
    """Permanent widgets of a status bar; ``sig_cancel`` when the person presses Cancel."""

    def __init__(self, status_bar: QStatusBar, on_cancel: Signal | object) -> None:
        self.status_bar = status_bar
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(260)
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.label = QLabel()
        self.cancel_button = QPushButton(translate("JobBar", "Cancel"))
        self.cancel_button.setToolTip(translate("JobBar", "Stop; nothing partial is left on disk"))
        self.cancel_button.clicked.connect(on_cancel)
        status_bar.addPermanentWidget(self.label)
        status_bar.addPermanentWidget(self.progress)
        status_bar.addPermanentWidget(self.cancel_button)
        self._job_label = ""
        self._job_shown = False
        self.set_job(None)

    def set_job(self, label: str | None) -> None:
        """Show a job starting (``label``) or no job at all (None)."""
        self._job_shown = label is not None
        self._job_label = label or ""
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.resetFormat()
        self.label.setText(f"{label}…" if label else "")
        for w in (self.progress, self.label, self.cancel_button):
            w.setVisible(self._job_shown)

    def set_progress(self, p: Progress) -> None:
        self.progress.setValue(int(p.fraction * 1000))
        self.progress.setFormat(f"{format_bytes(p.done)} / {format_bytes(p.total)}")
        name = f" — {p.name}" if p.name else ""
        if len(name) > 50:
            name = " — …" + p.name[-44:]
        self.label.setText(f"{self._job_label}{name}")

    def set_cancelling(self) -> None:
        self.label.setText(translate("JobBar", "Cancelling…"))

    def set_busy(self, text: str | None) -> None:
        """A short background step (opening) as a message and, with no job shown, a busy bar."""
        if text:
            self.status_bar.showMessage(text)
        else:
            self.status_bar.clearMessage()
        if not self._job_shown:
            self.progress.setRange(0, 0 if text else 1000)
            self.progress.setVisible(bool(text))
