"""The main window: assembles actions, pages, the job bar and the controllers around a Session.

State lives in :class:`inspector.session.Session`; :mod:`.controller` and
:mod:`.details_controller` connect it to the views. What stays here is the public API that the
CLI, tests and scripts drive (``open_path``, ``start_cast``, ``open_reference``, …, and the
signals they wait on), drag and drop, and closing.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import (
    QInputDialog,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from inspector.core.dtypes import CAST_TARGETS, DTYPES, DType
from inspector.session import KeepGlobs, RecentFiles, Session

from .cast_controller import CastController
from .cast_dialog import CastDialog
from .controller import WindowController
from .details_controller import DetailsController
from .drops import drop_action, local_paths, plan_drop
from .empty_page import EmptyPage
from .export_actions import ExportActions
from .file_dialogs import ask_checkpoint, ask_folder
from .help_dialogs import show_about, show_shortcuts
from .i18n import translate
from .job_bar import JobBar
from .job_runner import JobRunner
from .message_bar import MessageBar
from .quantize_controller import QuantizeController
from .tensor_page import TensorPage
from .values_controller import ValuesController
from .window_actions import WindowActions
from .window_views import WindowViews

if TYPE_CHECKING:
    from inspector.core.cast.job import CastReport
    from inspector.core.checkpoint import Checkpoint
    from inspector.core.diff import TensorDiff
    from inspector.core.layout import TensorInfo
    from inspector.core.summary import DTypeGroups, Summary

    from .workers import Worker

APP_TITLE = "Checkpoint Inspector"


class MainWindow(QMainWindow):
    # Emitted on the GUI thread; tests and --screenshot wait on these.
    loaded = Signal(str)  # path
    load_failed = Signal(str)  # the message shown
    details_ready = Signal(str)  # tensor name: stats (and before/after plots) are drawn
    cast_done = Signal(object)  # CastReport
    cast_failed = Signal(str)
    cast_cancelled = Signal()
    diff_done = Signal(object)  # list[TensorDiff]
    diff_failed = Signal(str)

    def __init__(
        self, settings: QSettings | None = None, target: str | None = None, parent: Any = None
    ) -> None:
        super().__init__(parent)
        self.settings = settings if settings is not None else QSettings()
        self.recent = RecentFiles(self.settings)
        self.keep_globs = KeepGlobs(self.settings)
        # --target is the person's explicit choice (it wins over config.json); the remembered
        # one is only the default
        self.session = Session(self._initial_target(target), chosen=target is not None)
        self.runner = JobRunner(self)
        self._reference_after_load: str | None = None  # the second of two dropped files
        self.loaded.connect(self._on_loaded_open_reference)
        self.load_failed.connect(lambda *_: setattr(self, "_reference_after_load", None))
        self.help_box: Any = None
        self.setWindowTitle(translate("MainWindow", "Checkpoint Inspector"))
        self.setAcceptDrops(True)
        self.window_actions = WindowActions(self)
        self.target_box = self.window_actions.build_toolbar(self, self.session.target.name)
        self.window_actions.build_menus(self)
        self._build_pages()
        self.job_bar = JobBar(self.statusBar(), self.cancel_job)
        a = self.window_actions
        self.cast_action, self.tree_action, self.recent_menu = a.cast, a.tree, a.recent_menu
        self.cancel_button = self.job_bar.cancel_button
        self._build_controllers()
        self._connect()
        self._disable_child_drops()
        self.empty_page.set_recent(self.recent.paths()[:5])
        self.controller.update_actions()
        self.resize(1280, 800)

    def _initial_target(self, target: str | None) -> DType:
        name = (target or str(self.settings.value("target", "F32"))).upper()
        return DTYPES[name if name in CAST_TARGETS else "F32"]

    def _build_pages(self) -> None:
        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(6, 6, 6, 6)
        self.message_bar = MessageBar()
        outer.addWidget(self.message_bar)
        self.stack = QStackedWidget()
        outer.addWidget(self.stack, 1)
        self.setCentralWidget(central)
        self.empty_page = EmptyPage()
        self.tensor_page = TensorPage()
        self.stack.addWidget(self.empty_page)
        self.stack.addWidget(self.tensor_page)
        # the views tests and scripts look at, by their usual names
        page = self.tensor_page
        self.table, self.model = page.table, page.model
        self.filter_edit, self.only_differing = page.filter_edit, page.only_differing
        self.count_label, self.summary_label = page.count_label, page.summary_label
        self.module_tree, self.details, self.plots_tabs = (
            page.module_tree,
            page.details,
            page.plots_tabs,
        )
        tabs = page.plots_tabs
        self.hint, self.precision_plot, self.diff_plot = (
            tabs.hint,
            tabs.precision_plot,
            tabs.diff_plot,
        )
        self.precision_panel, self.diff_panel = tabs.precision_panel, tabs.diff_panel
        self.copy_name_action = page.copy_name_action
        self.empty_label, self.recent_label = (
            self.empty_page.empty_label,
            self.empty_page.recent_label,
        )

    def _build_controllers(self) -> None:
        """Each controller gets the session, the runner and the views it drives; the window
        forwards their signals under its own names and answers their requests."""
        views = WindowViews(
            page=self.tensor_page,
            job_bar=self.job_bar,
            message_bar=self.message_bar,
            actions=self.window_actions,
            target_box=self.target_box,
            status_bar=self.statusBar(),
            settings=self.settings,
            dialog_parent=self,
        )
        c = self.controller = WindowController(self.session, self.runner, views, parent=self)
        for ours, theirs in (
            (self.loaded, c.loaded),
            (self.load_failed, c.load_failed),
            (self.diff_done, c.diff_done),
            (self.diff_failed, c.diff_failed),
        ):
            theirs.connect(ours)
        c.shown.connect(self._on_shown)
        cc = self.cast_controller = CastController(self.session, self.runner, views, parent=self)
        cc.cast_done.connect(self.cast_done)
        cc.cast_failed.connect(self.cast_failed)
        cc.cast_cancelled.connect(self.cast_cancelled)
        cc.open_requested.connect(self.open_path)
        cc.target_written.connect(self.set_target)
        qc = self.quantize_controller = QuantizeController(self.session, self.runner, views, self)
        qc.open_requested.connect(self.open_path)
        self.details_controller = DetailsController(
            self.session, self.runner, self.tensor_page, parent=self
        )
        self.details_controller.details_ready.connect(self.details_ready)
        self.values_controller = ValuesController(
            self.session, self.runner, self.tensor_page, parent=self
        )
        self.exports = ExportActions(self.session, views, parent=self)

    def _on_shown(self, path: str) -> None:
        self.stack.setCurrentIndex(1)
        self.setWindowTitle(f"{os.path.basename(path.rstrip(os.sep))} — {APP_TITLE}")
        self.recent.add(path)
        self.empty_page.set_recent(self.recent.paths()[:5])

    def _connect(self) -> None:
        a, page = self.window_actions, self.tensor_page
        a.open.triggered.connect(self.choose_file)
        a.open_folder.triggered.connect(self.choose_folder)
        a.cast.triggered.connect(self.open_cast_dialog)
        a.quantize.triggered.connect(self.quantize_controller.open_dialog)
        a.compare.triggered.connect(self.choose_reference)
        a.clear_reference.triggered.connect(self.clear_reference)
        a.find.triggered.connect(page.focus_filter)
        a.tree.toggled.connect(page.set_tree_visible)
        a.quit.triggered.connect(self.close)
        a.shortcuts.triggered.connect(
            lambda: setattr(self, "help_box", show_shortcuts(self, a.with_shortcuts()))
        )
        a.about.triggered.connect(lambda: setattr(self, "help_box", show_about(self)))
        a.only_differing.toggled.connect(page.only_differing.setChecked)
        page.only_differing.toggled.connect(a.only_differing.setChecked)
        a.recent_menu.aboutToShow.connect(
            lambda: a.fill_recent(self.recent.paths(), self.open_path, self.recent.clear)
        )
        self.target_box.currentTextChanged.connect(self.controller.set_target)
        self.empty_page.sig_open_clicked.connect(self.choose_file)
        self.empty_page.sig_path_activated.connect(self.open_path)
        page.plots_tabs.sig_tensor_clicked.connect(self.select_tensor)
        hidden = self.settings.value("hidden_columns", None)  # "PARAMS,SIZE"; "" = none hidden
        if isinstance(hidden, str):
            page.set_hidden_columns([n for n in hidden.split(",") if n])
        page.sig_hidden_columns_changed.connect(
            lambda names: self.settings.setValue("hidden_columns", ",".join(names))
        )

    def _disable_child_drops(self) -> None:
        """Drops anywhere land on the window: no child claims file URLs for itself."""
        for w in self.findChildren(QWidget):
            if w is not self:
                w.setAcceptDrops(False)
        self.table.viewport().setAcceptDrops(False)

    # ---- public API: state --------------------------------------------------------------------
    @property
    def ckpt(self) -> Checkpoint | None:
        return self.session.checkpoint

    @property
    def reference(self) -> Checkpoint | None:
        return self.session.reference

    @property
    def diffs(self) -> list[TensorDiff] | None:
        return self.session.diffs

    @property
    def cast_report(self) -> CastReport | None:
        return self.session.cast.report if self.session.cast is not None else None

    @property
    def cast_output(self) -> str | None:
        return self.session.cast.output_path if self.session.cast is not None else None

    @property
    def summary(self) -> Summary | None:
        return self.session.summary

    @property
    def target(self) -> DType:
        return self.session.target

    @property
    def cast_dialog(self) -> CastDialog | None:
        return self.cast_controller.dialog

    @property
    def choice_dialog(self) -> QInputDialog | None:
        """The open "which checkpoint?" dialog, for tests and scripts to answer."""
        return self.controller.choice_dialog

    @property
    def error_box(self) -> QMessageBox | None:
        """The open cast error box, for tests and scripts to read."""
        return self.cast_controller.error_box

    def current_tensor(self) -> TensorInfo | None:
        return self.session.current

    def recent_files(self) -> list[str]:
        return self.recent.paths()

    # ---- public API: actions ------------------------------------------------------------------
    def open_path(self, path: str) -> None:
        """Open in the background; on failure the message bar says why and nothing changes."""
        self.controller.open_path(path)

    def set_checkpoint(
        self, ckpt: Checkpoint, path: str | None = None, groups: DTypeGroups | None = None
    ) -> None:
        self.controller.show_checkpoint(ckpt, path, groups)

    def set_target(self, name: str) -> None:
        self.controller.set_target(name)

    def select_tensor(self, name: str) -> bool:
        """Select ``name``'s row; a quantized weight's logical name (as the comparison plot
        has it) selects the row of its codes."""
        quant = self.session.groups.quant
        w = quant.weights.get(name) if quant is not None else None
        return self.tensor_page.select_row_of(w.codes.name if w is not None else name)

    def show_module_tree(self, on: bool) -> None:
        self.window_actions.tree.setChecked(on)

    def open_reference(self, path: str) -> None:
        self.controller.open_reference(path)

    def clear_reference(self) -> None:
        self.controller.clear_reference()

    def start_cast(
        self, out: str, target: DType | None = None, keep: tuple[str, ...] = ()
    ) -> Worker | None:
        return self.cast_controller.start_cast(out, target or self.session.target, tuple(keep))

    def export_table(self, path: str) -> bool:
        """The table as CSV (``.csv``) or as ``list --json`` writes it; False: said why."""
        return self.exports.export_table(path)

    def export_report(self, path: str) -> bool:
        """The comparison (as ``diff --json``) or the last cast's report (``cast --report``)."""
        return self.exports.export_report(path)

    def cancel_job(self) -> None:
        self.controller.cancel_job()

    def show_error(self, text: str) -> None:
        self.message_bar.show_message(text, "error")

    def choose_file(self) -> None:
        title = translate("MainWindow", "Open checkpoint")
        if path := ask_checkpoint(self, title, self.recent.paths()):
            self.open_path(path)

    def choose_folder(self) -> None:
        title = translate("MainWindow", "Open model folder")
        if path := ask_folder(self, title, self.recent.paths()):
            self.open_path(path)

    def choose_reference(self) -> None:
        if self.ckpt is None:
            self.show_error(
                translate(
                    "MainWindow", "Open a checkpoint first, then compare it with a reference."
                )
            )
            return
        title = translate("MainWindow", "Open reference checkpoint")
        if path := ask_checkpoint(self, title, self.recent.paths()):
            self.open_reference(path)

    def open_cast_dialog(self) -> CastDialog | None:
        return self.cast_controller.open_dialog(self.keep_globs)

    # ---- drag and drop ------------------------------------------------------------------------
    def dragEnterEvent(self, ev: QDragEnterEvent) -> None:
        # any URL is accepted so that a drop we cannot open still gets an explanation
        if drop_action(ev):
            self.statusBar().showMessage(
                translate(
                    "MainWindow", "Drop to open · hold Shift to compare with it as reference"
                ),
                3000,
            )

    def dragMoveEvent(self, ev: QDragMoveEvent) -> None:
        drop_action(ev)

    def dropEvent(self, ev: QDropEvent) -> None:
        if not drop_action(ev):
            return
        paths = local_paths(ev)
        if not paths:
            self.show_error(
                translate(
                    "MainWindow",
                    "Only local files and folders can be opened (that was a remote URL).",
                )
            )
            return
        plan = plan_drop(paths)
        if plan.open is None:
            self.show_error(plan.problem)
            self.load_failed.emit("several items dropped")
            return
        mods = ev.modifiers()
        as_ref = bool(mods & (Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.AltModifier))
        if as_ref and self.ckpt is not None and plan.reference is None:
            self.open_reference(plan.open)
            return
        if plan.reference is not None:  # compared once the first one is shown
            self._reference_after_load = plan.reference
        self.open_path(plan.open)

    def _on_loaded_open_reference(self, _path: str) -> None:
        ref, self._reference_after_load = self._reference_after_load, None
        if ref is not None:
            self.open_reference(ref)

    # ---- closing ------------------------------------------------------------------------------
    def closeEvent(self, ev: QCloseEvent) -> None:
        self.runner.shutdown(10_000)
        self.session.close()
        super().closeEvent(ev)
