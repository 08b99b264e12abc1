"""Cast & Save in the window: start the cast job, take its result into the session (only if the
checkpoint is still the one shown), say what happened, show the per-tensor errors."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QMessageBox

from inspector.core.model_folder.intended import preset_globs, suggests_fp32_norms

from .cast_dialog import CastDialog
from .errors import error_text
from .i18n import translate
from .tensor_columns import Col

if TYPE_CHECKING:
    from inspector.core.cast.job import CastReport
    from inspector.core.checkpoint import Checkpoint
    from inspector.core.dtypes import DType
    from inspector.session import CastResult, KeepGlobs, Session

    from .job_runner import JobRunner
    from .window_views import WindowViews
    from .workers import Worker


class CastController(QObject):
    """The window forwards its signals and answers the two requests."""

    cast_done = Signal(object)  # CastReport
    cast_failed = Signal(str)
    cast_cancelled = Signal()
    open_requested = Signal(str)  # "Open the saved file"
    target_written = Signal(str)  # the dtype just written: the Status column must say it

    def __init__(
        self, session: Session, runner: JobRunner, views: WindowViews, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.runner = runner
        self.views = views
        self.page = views.page
        self.error_box: QMessageBox | None = None  # the open cast error box, for tests to read
        self.dialog: CastDialog | None = None  # the last cast dialog opened
        self.session.events.cast_changed.connect(self._on_session_cast)

    def open_dialog(self, keep_globs: KeepGlobs) -> CastDialog | None:
        """The Cast & Save (or Dequantize & save) dialog, its keep globs remembered per
        checkpoint; None while a job runs or nothing is open."""
        s, ckpt = self.session, self.session.checkpoint
        if ckpt is None or self.runner.busy:
            return None
        keep = keep_globs.get(s.path or ckpt.path)
        if not keep:  # the same fix check suggests: keep what the model keeps in F32 on purpose
            config = s.model_config
            globs = preset_globs("fp32-norms", config.modules_to_not_convert if config else ())
            if suggests_fp32_norms(ckpt.tensors, s.target.name, globs):
                keep = " ".join(globs)
        dlg = CastDialog(ckpt, s.target, self.views.dialog_parent, keep=keep,
                         quant=s.groups.quant)  # fmt: skip
        dlg.accepted.connect(lambda d=dlg: self._on_dialog_accepted(d, keep_globs))
        dlg.finished.connect(dlg.deleteLater)
        self.dialog = dlg
        dlg.open()
        return dlg

    def _on_dialog_accepted(self, dlg: CastDialog, keep_globs: KeepGlobs) -> None:
        keep_globs.set(self.session.path or dlg.ckpt.path, dlg.keep_edit.text())
        self.start_cast(dlg.output, dlg.target, dlg.keep)

    def start_cast(self, out: str, target: DType, keep: tuple[str, ...]) -> Worker | None:
        from inspector.core.cast.job import cast_checkpoint

        ckpt = self.session.checkpoint
        if ckpt is None or self.runner.busy:
            return None
        out = os.path.abspath(out)
        return self.runner.run_exclusive(
            "cast",
            translate("Controller", "Casting to {target}").format(target=target.name),
            lambda: cast_checkpoint(ckpt, target, out, keep=keep, report=True),
            on_finished=lambda rep, o=out, c=ckpt: self._on_cast_finished(rep, o, c),
            on_errored=lambda e, o=out: self._on_cast_errored(o, e),
            on_aborted=self._on_cast_aborted,
        )

    def _on_cast_finished(self, report: CastReport, out: str, source: Checkpoint) -> None:
        name = os.path.basename(out.rstrip(os.sep))
        if not self.session.accept_cast(report, out, source):
            # another checkpoint was opened meanwhile: the file is saved, the plots would lie
            self.views.message_bar.show_message(
                translate(
                    "Controller", "Saved {name} (cast of a checkpoint no longer shown)."
                ).format(name=name),
                "ok",
                translate("Controller", "Open the saved file"),
                lambda: self.open_requested.emit(out),
            )
        else:
            if report.target != self.session.target.name:
                # the person cast to this dtype: it is the model's now, and the Status column
                # must say what was written, not "→ BF16" beside F16 errors
                self.target_written.emit(report.target)
            changed = [r for r in report.tensors if r.from_ != r.to]
            lossless = sum(1 for r in changed if r.lossless)
            elapsed = time.monotonic() - self.runner.job_started_at
            self.views.message_bar.show_message(
                (
                    translate(
                        "Controller",
                        "Saved {name} in {secs} s: 1 tensor cast to {target}, {lossless} of them "
                        "lossless.",
                    )
                    if len(changed) == 1
                    else translate(
                        "Controller",
                        "Saved {name} in {secs} s: {n} tensors cast to {target}, {lossless} of "
                        "them lossless.",
                    )
                ).format(
                    name=name,
                    secs=f"{elapsed:.1f}",
                    n=len(changed),
                    target=report.target,
                    lossless=lossless,
                ),
                "ok",
                translate("Controller", "Open the saved file"),
                lambda: self.open_requested.emit(out),
            )
        self.cast_done.emit(report)

    def _on_cast_errored(self, out: str, e: BaseException) -> None:
        msg = error_text(out, e)
        box = QMessageBox(
            QMessageBox.Icon.Critical,
            translate("Controller", "Cast failed"),
            translate("Controller", "Could not save {what}").format(what=msg),
            parent=self.views.dialog_parent,
        )
        box.setInformativeText(translate("Controller", "Nothing was written."))
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.error_box = box
        box.open()
        self.cast_failed.emit(msg)

    def _on_cast_aborted(self) -> None:
        self.views.flash(translate("Controller", "Cast cancelled: nothing was written."))
        self.cast_cancelled.emit()

    def _on_session_cast(self, cast: CastResult | None) -> None:
        page = self.page
        page.model.set_cast_report(cast.report.tensors if cast is not None else None)
        page.set_column_visible(Col.CAST_ERR, cast is not None)
        page.plots_tabs.set_cast(cast, self.session.checkpoint)
        if cast is not None:
            page.plots_tabs.show_cast()
