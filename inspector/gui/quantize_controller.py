"""Quantize… in the window: the preview job (off the GUI thread, progress and cancel in the job
bar), its reports into the session (only for the checkpoint still shown), a scheme's errors in
the precision tab, then the save job."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, Signal

from inspector.core.wording import format_bytes

from .errors import error_text
from .i18n import translate
from .quantize_dialog import QuantizeDialog

if TYPE_CHECKING:
    from inspector.core.checkpoint import Checkpoint
    from inspector.core.quantize.report import QuantizeReport
    from inspector.session import QuantizePreview, Session

    from .job_runner import JobRunner
    from .window_views import WindowViews
    from .workers import Worker


class QuantizeController(QObject):
    preview_done = Signal(object)  # list[QuantizeReport]
    quantize_done = Signal(object)  # QuantizeReport
    quantize_failed = Signal(str)
    open_requested = Signal(str)  # "Open the saved model"

    def __init__(
        self, session: Session, runner: JobRunner, views: WindowViews, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.runner = runner
        self.views = views
        self.dialog: QuantizeDialog | None = None
        self.session.events.preview_changed.connect(self._on_session_preview)
        self.session.events.checkpoint_changed.connect(self._on_session_checkpoint)

    def open_dialog(self) -> QuantizeDialog | None:
        """The dialog, measuring at once (or showing the preview already made for this
        checkpoint); None while a job runs or nothing is open."""
        ckpt = self.session.checkpoint
        if ckpt is None or self.runner.busy:
            return None
        dlg = QuantizeDialog(ckpt, self.views.dialog_parent)
        dlg.sig_scheme_chosen.connect(self.session.show_scheme)
        dlg.sig_preview_requested.connect(lambda ignore: self.start_preview(tuple(ignore)))
        dlg.sig_save_requested.connect(
            lambda scheme, out, ignore, d=dlg: self.start_quantize(
                scheme, out, tuple(ignore), d.ckpt
            )
        )
        dlg.finished.connect(dlg.deleteLater)
        self.dialog = dlg
        dlg.open()
        preview = self.session.preview
        if preview is not None and preview.ignore == dlg.ignore:
            dlg.set_reports(preview.reports)
        else:
            self.start_preview(dlg.ignore)
        return dlg

    def start_preview(self, ignore: tuple[str, ...]) -> Worker | None:
        from inspector.core.quantize.preview import preview_checkpoint
        from inspector.core.quantize.schemes import SCHEMES

        ckpt = self.session.checkpoint
        if ckpt is None:
            return None
        if (dlg := self._live_dialog()) is not None:
            dlg.set_measuring(True)
        return self.runner.run_exclusive(
            "preview",
            translate("QuantizeController", "Measuring six quantization schemes"),
            lambda: preview_checkpoint(ckpt, list(SCHEMES.values()), ignore),
            on_finished=lambda reps, c=ckpt, i=ignore: self._on_preview(reps, c, i),
            on_errored=lambda e, c=ckpt: self._on_preview_failed(c, e),
            on_aborted=self._on_preview_aborted,
        )

    def _on_preview(
        self, reports: list[QuantizeReport], source: Checkpoint, ignore: tuple[str, ...]
    ) -> None:
        if not self.session.accept_preview(reports, source, ignore):
            return  # another checkpoint is shown: its numbers would lie
        if (dlg := self._dialog_for(source)) is not None:
            dlg.set_reports(reports)
        self.preview_done.emit(reports)

    def _on_preview_failed(self, source: Checkpoint, e: BaseException) -> None:
        text = error_text(source.path, e)
        if (dlg := self._dialog_for(source)) is not None:
            dlg.set_failed(text)
        else:
            self.views.message_bar.show_message(text, "error")

    def _on_preview_aborted(self) -> None:
        if (dlg := self._live_dialog()) is not None:
            dlg.set_failed(translate("QuantizeController", "Measuring cancelled."))

    def _live_dialog(self) -> QuantizeDialog | None:
        """The dialog while it is open (closed, Qt deletes it: a call into it would raise)."""
        d = self.dialog
        if d is None or not shiboken6.isValid(d) or not d.isVisible():
            return None
        return d

    def _dialog_for(self, source: Checkpoint) -> QuantizeDialog | None:
        d = self._live_dialog()
        return d if d is not None and d.ckpt is source else None

    def _on_session_checkpoint(self, ckpt: Checkpoint | None, _path: str) -> None:
        """Another checkpoint is shown: the open dialog measured the previous one; it closes
        (its preview is dropped by the session, its Save would write the wrong model)."""
        d = self._live_dialog()
        if d is not None and d.ckpt is not ckpt:
            d.reject()

    def start_quantize(
        self, scheme: str, out: str, ignore: tuple[str, ...], source: Checkpoint | None = None
    ) -> Worker | None:
        """Quantize ``source`` (the checkpoint the dialog measured; default the one shown),
        only while it is still the one shown."""
        from inspector.core.quantize.job import quantize_checkpoint
        from inspector.core.quantize.schemes import SCHEMES

        ckpt = self.session.checkpoint
        if ckpt is None or (source is not None and source is not ckpt):
            self.views.message_bar.show_message(
                translate(
                    "QuantizeController",
                    "Another checkpoint is shown now; nothing was written. Open Quantize… again.",
                ),
                "error",
            )
            return None
        out = os.path.abspath(out)  # the runner queues it behind a job still finishing
        return self.runner.run_exclusive(
            "quantize",
            translate("QuantizeController", "Quantizing to {scheme}").format(scheme=scheme),
            # the preview measured it already: the save only writes
            lambda: quantize_checkpoint(ckpt, SCHEMES[scheme], out, ignore, measure=False),
            on_finished=lambda rep, o=out: self._on_saved(rep, o),
            on_errored=lambda e, o=out: self._on_save_failed(o, e),
            on_aborted=lambda: self.views.flash(
                translate("QuantizeController", "Quantize cancelled: nothing was written.")
            ),
        )

    def _on_saved(self, report: QuantizeReport, out: str) -> None:
        elapsed = time.monotonic() - self.runner.job_started_at
        self.views.message_bar.show_message(
            (
                translate(
                    "QuantizeController",
                    "Saved {name} in {secs} s: 1 weight quantized with {scheme}, {size}.",
                )
                if len(report.weights) == 1
                else translate(
                    "QuantizeController",
                    "Saved {name} in {secs} s: {n} weights quantized with {scheme}, {size}.",
                )
            ).format(
                name=os.path.basename(out.rstrip(os.sep)),
                secs=f"{elapsed:.1f}",
                n=len(report.weights),
                scheme=report.scheme,
                size=format_bytes(report.bytes_out),
            ),
            "ok",
            translate("QuantizeController", "Open the saved model"),
            lambda: self.open_requested.emit(out),
        )
        self.quantize_done.emit(report)

    def _on_save_failed(self, out: str, e: BaseException) -> None:
        msg = error_text(out, e)
        self.views.message_bar.show_message(
            translate("QuantizeController", "Quantize failed, nothing was written: {what}").format(
                what=msg
            ),
            "error",
        )
        self.quantize_failed.emit(msg)

    def _on_session_preview(self, preview: QuantizePreview | None) -> None:
        tabs = self.views.page.plots_tabs
        shown = preview.shown_report if preview is not None else None
        tabs.set_quantize_preview(shown)
        if shown is not None:
            tabs.show_cast()
