"""Connects the window's views to the session: view signals call ``_on_view_*``, session events
call ``_on_session_*`` (ndv's controller). Opening, the target, the reference and the cast live
here; the details pane has its own controller (:mod:`.details_controller`)."""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QInputDialog

from inspector.core.checkpoint import Checkpoint
from inspector.core.dtypes import DTYPES, DType
from inspector.core.errors import AmbiguousCheckpointError, CheckpointError
from inspector.core.formats.burnpack import burnpack_facts
from inspector.core.formats.gguf import FORMAT_NAME as GGUF
from inspector.core.formats.torch_pickle import pickle_facts
from inspector.core.model_folder.config import ModelConfig, read_model_config, weights_disagree
from inspector.core.model_folder.intended import IntendedMatcher, preset_globs
from inspector.core.model_folder.lint import lint_path
from inspector.core.opening import open_checkpoint
from inspector.core.quant.recognise import recognise
from inspector.core.summary import DTypeGroups
from inspector.session import identities_of

from .errors import error_text
from .i18n import translate
from .open_messages import say_what_opened
from .plot_tabs import PlotTab
from .tensor_columns import Col

if TYPE_CHECKING:
    from inspector.core.diff import TensorDiff
    from inspector.core.progress import Job
    from inspector.core.quant.layout import QuantLayout
    from inspector.session import FileIdentity, Session

    from .job_runner import JobRunner
    from .window_views import WindowViews


def open_and_index(
    path: str, keep_all: bool = False
) -> tuple[Checkpoint, DTypeGroups, dict[str, FileIdentity], ModelConfig | None]:
    """Worker side of opening: the header, the dtype groups, the files' identities, the config."""
    ckpt = open_checkpoint(path, keep_all=keep_all)
    try:
        config = read_model_config(path)
    except CheckpointError:
        config = None  # a broken config.json does not stop the weights from showing (lint says)
    quant = recognise(ckpt.tensors, config.quant_config if config is not None else None)
    return ckpt, DTypeGroups(ckpt.tensors, quant), identities_of(ckpt), config


def _by_stored_name(
    diffs: list[TensorDiff] | None, quant: QuantLayout | None
) -> list[TensorDiff] | None:
    """The table lists stored tensors: a quantized weight's comparison goes on its codes row."""
    if diffs is None or quant is None or not quant.weights:
        return diffs
    out = []
    for d in diffs:
        w = quant.weights.get(d.name)
        out.append(dataclasses.replace(d, name=w.codes.name) if w is not None else d)
    return out


def compare_by_value(a: Checkpoint, b: Checkpoint, quant_a: QuantLayout | None) -> Job:
    """The window's Compare: a quantized side is compared by its dequantized values (one that
    cannot be dequantized exactly, tensor by tensor as stored)."""
    from inspector.core.diff import diff_checkpoints

    try:
        config_b = read_model_config(b.path)
    except CheckpointError:
        config_b = None
    quant_b = recognise(b.tensors, config_b.quant_config if config_b is not None else None)
    quant_a, quant_b = (q if q is not None and q.cast_refusal() is None else None
                        for q in (quant_a, quant_b))  # fmt: skip
    return diff_checkpoints(a, b, quant_a=quant_a, quant_b=quant_b)


class WindowController(QObject):
    """Opening, the target, the reference and the diff; the window forwards its signals."""

    loaded = Signal(str)  # path
    load_failed = Signal(str)  # the message shown
    shown = Signal(str)  # a checkpoint is on screen: the window shows its page, title, recent
    diff_done = Signal(object)  # list[TensorDiff]
    diff_failed = Signal(str)

    def __init__(
        self, session: Session, runner: JobRunner, views: WindowViews, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.runner = runner
        self.views = views
        self.page = views.page
        self.choice_dialog: QInputDialog | None = None  # the open "which checkpoint?" dialog
        ev = self.session.events
        ev.checkpoint_changed.connect(self._on_session_checkpoint)
        ev.target_changed.connect(self._on_session_target)
        ev.reference_changed.connect(lambda _ref: self.update_actions())
        ev.diffs_changed.connect(self._on_session_diffs)
        ev.cast_changed.connect(self._on_session_cast)
        ev.preview_changed.connect(lambda _preview: self.update_plots())
        self.runner.sig_job_started.connect(self._on_job_started)
        self.runner.sig_job_progress.connect(views.job_bar.set_progress)
        self.runner.sig_job_queued.connect(
            lambda label: views.flash(
                translate("Controller", "{job}: waits for the running job").format(job=label)
            )
        )
        self.runner.sig_idle.connect(self._on_idle)

    # ---- opening ----------------------------------------------------------------------------
    def open_path(self, path: str, keep_all: bool = False) -> None:
        """Open ``path``; ``keep_all``: a training checkpoint with everything it holds."""
        path = os.path.abspath(os.path.expanduser(os.fspath(path)))
        name = os.path.basename(path.rstrip(os.sep)) or path
        self.views.job_bar.set_busy(translate("Controller", "Opening {name}…").format(name=name))
        self.runner.request(
            "open",
            open_and_index,
            path,
            keep_all,
            on_result=lambda res, p=path: self._on_opened(p, res),
            on_error=lambda e, p=path: self._on_open_failed(p, e),
        )

    def _on_opened(self, path: str, res: tuple) -> None:
        self.views.job_bar.set_busy(None)
        ckpt, groups, identities, config = res
        self.show_checkpoint(ckpt, path, groups, identities, config)

    def show_checkpoint(
        self,
        ckpt: Checkpoint,
        path: str | None = None,
        groups: DTypeGroups | None = None,
        identities: dict[str, FileIdentity] | None = None,
        config: ModelConfig | None = None,
    ) -> None:
        self.runner.invalidate("stats", "before_after")
        self.runner.drop("diff")  # a comparison of the previous checkpoint
        dropped = self.session.open(ckpt, path, groups, identities, config)
        if dropped is not None:
            name = os.path.basename(dropped.path.rstrip(os.sep))
            self.views.message_bar.show_message(
                translate(
                    "Controller",
                    "The reference {name} was cleared: it was chosen for the previous checkpoint.",
                ).format(name=name),
                "info",
                translate("Controller", "Compare with {name} again").format(name=name),
                lambda p=dropped.path: self.open_reference(p),
            )
        say_what_opened(
            self.views.message_bar,
            ckpt,
            lambda p=path or ckpt.path: self.open_path(p, keep_all=True),
        )
        self.loaded.emit(self.session.path)

    def _on_open_failed(self, path: str, e: BaseException) -> None:
        self.views.job_bar.set_busy(None)
        msg = error_text(path, e)
        text = translate("Controller", "Could not open {what}").format(what=msg)
        if self.session.checkpoint:
            text += translate("Controller", " — still showing the previous checkpoint.")
        self.views.show_error(text)
        self.load_failed.emit(msg)
        if isinstance(e, AmbiguousCheckpointError) and e.choices:
            self._offer_choice(e.choices)

    def _offer_choice(self, choices: list[str]) -> None:
        """A folder with several index variants or unjoined files: let the person pick one."""
        dialog = QInputDialog(self.views.dialog_parent)
        dialog.setWindowTitle(translate("Controller", "Open which checkpoint?"))
        dialog.setLabelText(translate("Controller", "This folder holds several checkpoints. Open:"))
        dialog.setComboBoxItems([os.path.basename(c) for c in choices])
        dialog.setComboBoxEditable(False)
        by_name = {os.path.basename(c): c for c in choices}
        dialog.textValueSelected.connect(lambda name: self.open_path(by_name[name]))
        self.choice_dialog = dialog
        dialog.open()  # window-modal, not blocking: the event loop (and tests) go on

    def _on_session_checkpoint(self, ckpt: Checkpoint, path: str) -> None:
        views, page = self.views, self.page
        config = self.session.model_config
        config_dtype = config.dtype.name if config is not None and config.dtype else None
        views.actions.set_config_dtype(views.target_box, config_dtype)
        views.actions.show_target(views.target_box, self.session.target, self.session.target_source)
        page.model.set_rows(ckpt.tensors, self.session.target, self.session.groups)
        page.set_quant(self.session.groups.quant)
        skip = config.modules_to_not_convert if config is not None else ()
        page.model.set_intended(IntendedMatcher(preset_globs("fp32-norms", skip)))
        page.refresh_tree()
        for col in (Col.CAST_ERR, Col.REF_DIFF):
            page.set_column_visible(col, False)
        page.set_summary(self.session.summary)
        page.set_config_note(weights_disagree(config, ckpt.tensors) if config else None)
        views.message_bar.hide()
        self.shown.emit(path)
        self.update_actions()
        self.update_plots()
        self._request_lint(ckpt, path)
        if not page.select_first_interesting():
            self.session.select(None)

    # ---- target -----------------------------------------------------------------------------
    def set_target(self, name: str) -> None:
        """The person picked ``name`` in the chooser (or a script asked for it): their choice
        wins over config.json from now on; picking the "from config.json" entry goes back to
        the config's dtype."""
        box = self.views.target_box
        if box.currentText() != name:  # re-enters through the signal
            exact = box.findText(name)  # the "from config.json" entry by its own text
            if exact >= 0:
                box.setCurrentIndex(exact)
            else:
                box.setCurrentText(name.split()[0].upper())
            return
        if box.currentIndex() == 0 and box.itemData(0) == "config":
            self.session.choose_target(None)
        else:
            dt = DTYPES[name.split()[0].upper()]
            self.views.settings.setValue("target", dt.name)
            self.session.choose_target(dt)
        self.views.actions.show_target(box, self.session.target, self.session.target_source)

    def _on_session_cast(self, _cast: object) -> None:
        self.update_plots()
        self.update_actions()  # a report to export

    def _on_session_target(self, dt: DType) -> None:
        page = self.page
        page.model.set_target(dt)
        page.refresh_tree()
        page.set_summary(self.session.summary)
        self.update_plots()

    # ---- reference and diff ---------------------------------------------------------------
    def open_reference(self, path: str) -> None:
        path = os.path.abspath(path)
        self.views.job_bar.set_busy(
            translate("Controller", "Opening reference {name}…").format(name=os.path.basename(path))
        )
        self.runner.request(
            "open_ref",
            open_checkpoint,
            path,
            on_result=self._on_reference_opened,
            on_error=lambda e, p=path: self._on_reference_failed(p, e),
        )

    def _on_reference_opened(self, ref: Checkpoint) -> None:
        self.views.job_bar.set_busy(None)
        if self.session.checkpoint is None:
            ref.close()
            return
        self.runner.drop("diff")
        self.session.set_reference(ref)
        a, b = self.session.checkpoint, ref
        quant_a = self.session.groups.quant

        self.runner.run_exclusive(
            "diff",
            translate("Controller", "Comparing with {name}").format(name=os.path.basename(b.path)),
            lambda: compare_by_value(a, b, quant_a),
            on_finished=lambda diffs, a=a, b=b: self._on_diff_finished(diffs, a, b),
            on_errored=self._on_diff_errored,
            on_aborted=lambda: self.views.flash(translate("Controller", "Comparison cancelled.")),
        )

    def _on_reference_failed(self, path: str, e: BaseException) -> None:
        self.views.job_bar.set_busy(None)
        msg = error_text(path, e)
        self.views.show_error(
            translate("Controller", "Could not open the reference {what}").format(what=msg)
        )
        self.diff_failed.emit(msg)

    def _on_diff_finished(self, diffs: list[TensorDiff], a: Checkpoint, b: Checkpoint) -> None:
        if self.session.accept_diffs(diffs, a, b):
            self.diff_done.emit(diffs)

    def _on_diff_errored(self, e: BaseException) -> None:
        msg = error_text(None, e)
        self.views.show_error(translate("Controller", "Comparison failed: {why}").format(why=msg))
        self.diff_failed.emit(msg)

    def clear_reference(self) -> None:
        self.runner.drop("diff")
        self.session.clear_reference()

    def _on_session_diffs(self, diffs: list[TensorDiff] | None) -> None:
        page, s = self.page, self.session
        page.model.set_diff(_by_stored_name(diffs, s.groups.quant))
        page.set_column_visible(Col.REF_DIFF, diffs is not None)
        ref = os.path.basename(s.reference.path) if s.reference else "reference"
        page.plots_tabs.set_diffs(diffs, s.diff_summary, ref)
        self.update_plots()
        self.update_actions()
        if diffs is not None:
            page.plots_tabs.show_diff()
        if diffs is not None and s.diff_summary is not None:
            d = s.diff_summary
            text = translate(
                "Controller",
                "Compared with {ref}: {n} differing (worst max |Δ| {worst}), {equal} equal",
            ).format(ref=ref, n=d.n_differ, worst=f"{d.worst_abs:.3g}", equal=d.n_equal)
            if d.n_unmatched:
                text += translate(
                    "Controller", "; {n} only in one file or shaped differently"
                ).format(n=d.n_unmatched)
            # the full stop is the language's own (。 in Chinese)
            self.views.message_bar.show_message(
                translate("Controller", "{sentence}.").format(sentence=text), "info"
            )

    # ---- jobs and view state ----------------------------------------------------------------
    def cancel_job(self) -> None:
        if self.runner.busy:
            self.runner.cancel()
            self.views.job_bar.set_cancelling()

    def _on_job_started(self, label: str) -> None:
        self.views.job_bar.set_job(label)
        self.update_actions()

    def _on_idle(self) -> None:
        self.views.job_bar.set_job(None)
        self.update_actions()

    def update_actions(self) -> None:
        s = self.session
        self.views.actions.set_state(
            s.checkpoint is not None,
            self.runner.busy,
            s.reference is not None,
            s.cast is not None or s.diffs is not None,
        )

    def update_plots(self) -> None:
        s = self.session
        summary = s.summary
        facts = pickle_facts(s.checkpoint.files[0]) if s.checkpoint is not None else None
        self.page.set_pickle(facts)
        self.page.set_lint(s.lint, os.path.basename(s.path or ""))  # open_path made it absolute
        metadata = s.checkpoint.metadata if s.checkpoint is not None else None
        burn = burnpack_facts(s.checkpoint.files[0]) if s.checkpoint is not None else None
        gguf = s.checkpoint is not None and s.checkpoint.files[0].format == GGUF
        self.page.plots_tabs.set_metadata(
            metadata, s.checkpoint is not None and s.checkpoint.is_sharded, burn, gguf
        )
        if s.checkpoint is not None:
            first = s.checkpoint.files[0]
            self.page.plots_tabs.set_burn_source(first.path, first.format, first.metadata)
        shown = {
            PlotTab.HINT: summary is not None and summary.n_differ > 0,
            PlotTab.CAST: s.cast is not None
            or (s.preview is not None and s.preview.shown is not None),
            PlotTab.DIFF: s.diffs is not None,
            PlotTab.PICKLE: facts is not None,
            PlotTab.LINT: bool(s.lint),
            PlotTab.METADATA: bool(metadata) or bool(burn and burn.scalars),
        }
        self.page.set_plots({tab for tab, on in shown.items() if on})

    def _request_lint(self, ckpt: Checkpoint, path: str) -> None:
        """A model folder (opened as a folder, or sharded) is linted in the background."""
        self.runner.invalidate("lint")
        if ckpt.folder is None and not ckpt.is_sharded:
            return
        self.runner.request(
            "lint",
            lint_path,
            path,
            on_result=lambda findings, p=path: self._on_lint(findings, p),
            on_error=lambda _e: None,  # the folder opened; a lint that fails has nothing to show
        )

    def _on_lint(self, findings: list, path: str) -> None:
        if self.session.accept_lint(findings, path):
            self.update_plots()
