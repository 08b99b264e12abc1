"""The main window: drop a checkpoint, see which tensors differ from the model dtype, cast & save,
and look at the precision lost. Every long step (open, stats, cast, diff, histograms) runs on a
worker thread; the window only adapts core objects and draws them."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QIcon,
    QKeySequence,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from inspector.core.checkpoint import Checkpoint, open_checkpoint
from inspector.core.dtypes import CAST_TARGETS, DTYPES, DType
from inspector.core.errors import AmbiguousCheckpointError, CheckpointError
from inspector.core.header import TensorInfo
from inspector.core.progress import Progress
from inspector.core.summary import DTypeGroups, Summary, format_bytes, tensor_status

from .cast_dialog import CastDialog
from .details_pane import DetailsPane
from .hint_panel import HintPanel
from .message_bar import MessageBar
from .module_tree import ModuleTree
from .plots import OverviewPanel, OverviewPlot
from .precision import BeforeAfter, before_after
from .tensor_table import Col, TensorFilterProxy, TensorTableModel, cast_error_value, status_text
from .workers import FunctionWorker, JobWorker, Worker, WorkerSet

APP_TITLE = "Checkpoint Inspector"
EMPTY_TEXT = "Drop a .safetensors file, index.json or model folder"
MAX_RECENT = 10


def error_text(path: str | None, e: BaseException) -> str:
    """One human line for an exception from the core."""
    if isinstance(e, CheckpointError):
        return str(e)
    if isinstance(e, OSError):
        where = e.filename or path
        return f"{where}: {e.strerror or e}" if where else str(e.strerror or e)
    what = str(e) or type(e).__name__
    return f"{path}: {what}" if path else what


def open_and_index(path: str) -> tuple[Checkpoint, DTypeGroups]:
    """Worker side of opening: read the header and group tensors by dtype (one pass each)."""
    ckpt = open_checkpoint(path)
    return ckpt, DTypeGroups(ckpt.tensors)


def stats_and_histogram_job(ckpt: Checkpoint, t: TensorInfo, bins: int = 64):
    """Stats, then a value histogram over [min, max], as one cancellable job (two streamed passes).

    Yields Progress per chunk, so selecting another tensor stops a big one within a chunk.
    Returns ``(TensorStats, edges, counts)``.
    """
    import numpy as np

    from inspector.core.stats import STATS_CHUNK_BYTES, compute_stats, histogram

    passes_total = 2 * t.nbytes
    stats_job = compute_stats(ckpt, [t])
    while True:
        try:
            p = next(stats_job)
        except StopIteration as stop:
            s = stop.value[t.name]
            break
        yield Progress(p.done, passes_total, t.name)
    lo, hi = (s.min, s.max) if s.min is not None else (0.0, 1.0)
    edges, counts = histogram(np.zeros(0), bins, (lo, hi))
    counts = np.zeros(bins, dtype=np.int64)
    done = t.nbytes
    for chunk in ckpt.iter_chunks(t, STATS_CHUNK_BYTES):
        x = np.abs(chunk) if chunk.dtype.kind == "c" else chunk
        counts += histogram(x, bins, (lo, hi))[1]
        done += chunk.nbytes
        yield Progress(min(done, passes_total), passes_total, t.name)
    return s, edges, counts


class _OutputOpener:
    """Opens the saved checkpoint once, from whichever worker thread asks first."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._ckpt: Checkpoint | None = None

    def get(self) -> Checkpoint:
        with self._lock:
            if self._ckpt is None:
                self._ckpt = open_checkpoint(self.path)
            return self._ckpt

    def close(self) -> None:
        with self._lock:
            if self._ckpt is not None:
                self._ckpt.close()
                self._ckpt = None


def _before_after_job(ckpt: Checkpoint, t: TensorInfo, out: _OutputOpener) -> BeforeAfter:
    saved = out.get()
    return before_after(t.name, ckpt.view(t), saved.view(t.name))


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
        self.workers = WorkerSet(self)
        self.ckpt: Checkpoint | None = None
        self.reference: Checkpoint | None = None
        self.cast_report: Any = None
        self.cast_output: str | None = None
        self._out_opener: _OutputOpener | None = None
        self.diffs: list[Any] | None = None
        self.summary: Summary | None = None
        self._groups = DTypeGroups(())
        self._stats_cache: dict[tuple[str, str], tuple[Any, Any, Any]] = {}
        self._ba_cache: dict[tuple[str, str], BeforeAfter] = {}
        self._pending: set[str] = set()
        self._current: TensorInfo | None = None
        self._cast_dialog: CastDialog | None = None
        self._job: Worker | None = None  # the cast or diff job shown in the status bar
        self._job_started = 0.0
        self.last_error = ""

        self.setWindowTitle(APP_TITLE)
        self.setAcceptDrops(True)
        self._target = self._initial_target(target)
        self._build_actions()
        self._build_ui()
        self._build_menus()
        self._disable_child_drops()
        self._update_recent_label()
        self._update_actions()
        self.resize(1280, 800)

    # =====================================================================================
    # construction
    # =====================================================================================
    def _initial_target(self, target: str | None) -> DType:
        name = target or str(self.settings.value("target", "F32"))
        name = name.upper()
        if name not in CAST_TARGETS:
            name = "F32"
        return DTYPES[name]

    def _build_actions(self) -> None:
        style = self.style()
        sp = style.StandardPixmap
        self.open_action = QAction(style.standardIcon(sp.SP_DialogOpenButton), "&Open…", self)
        self.open_action.setShortcut(QKeySequence.StandardKey.Open)
        self.open_action.setToolTip("Open a .safetensors file, index.json or model folder (Ctrl+O)")
        self.open_action.triggered.connect(self.choose_file)
        self.open_folder_action = QAction("Open &Folder…", self)
        self.open_folder_action.triggered.connect(self.choose_folder)
        self.cast_action = QAction(
            style.standardIcon(sp.SP_DialogSaveButton), "&Cast && Save…", self
        )
        self.cast_action.setShortcut(QKeySequence.StandardKey.Save)
        self.cast_action.setToolTip("Cast float tensors to the target dtype and save (Ctrl+S)")
        self.cast_action.triggered.connect(self.open_cast_dialog)
        self.compare_action = QAction(
            style.standardIcon(sp.SP_FileDialogContentsView), "Compare with &Reference…", self
        )
        self.compare_action.setShortcut(QKeySequence("Ctrl+Shift+O"))
        self.compare_action.setToolTip(
            "Open a second checkpoint as reference and show per-tensor max |Δ| "
            "(or Shift+drop it onto the window)"
        )
        self.compare_action.triggered.connect(self.choose_reference)
        self.clear_reference_action = QAction("Clear Reference", self)
        self.clear_reference_action.triggered.connect(self.clear_reference)
        self.find_action = QAction("&Filter Tensors", self)
        self.find_action.setShortcut(QKeySequence.StandardKey.Find)
        self.find_action.triggered.connect(self._focus_filter)
        self.tree_action = QAction(
            style.standardIcon(sp.SP_FileDialogListView), "&Modules", self, checkable=True
        )
        self.tree_action.setShortcut(QKeySequence("Ctrl+T"))
        self.tree_action.setToolTip("Group tensors by module prefix (Ctrl+T)")
        self.tree_action.toggled.connect(self.show_module_tree)
        self.quit_action = QAction("&Quit", self)
        self.quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        self.quit_action.triggered.connect(self.close)
        for a in (self.find_action,):
            self.addAction(a)

    def _build_menus(self) -> None:
        mb = self.menuBar()
        file_menu = mb.addMenu("&File")
        file_menu.addAction(self.open_action)
        file_menu.addAction(self.open_folder_action)
        self.recent_menu = QMenu("Open &Recent", self)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addMenu(self.recent_menu)
        file_menu.addSeparator()
        file_menu.addAction(self.cast_action)
        file_menu.addAction(self.compare_action)
        file_menu.addAction(self.clear_reference_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        view_menu = mb.addMenu("&View")
        view_menu.addAction(self.find_action)
        view_menu.addAction(self.only_differing_action)
        view_menu.addAction(self.tree_action)

    def _build_ui(self) -> None:
        tb = QToolBar("Main", self)
        tb.setObjectName("MainToolBar")
        tb.setMovable(False)
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.addToolBar(tb)
        tb.addAction(self.open_action)
        tb.addSeparator()
        tb.addWidget(QLabel(" Model dtype: "))
        self.target_box = QComboBox()
        self.target_box.setAccessibleName("Target dtype")
        self.target_box.setToolTip(
            "The dtype the model uses; tensors in another float dtype are flagged"
        )
        self.target_box.addItems(list(CAST_TARGETS))
        self.target_box.setCurrentText(self._target.name)
        self.target_box.currentTextChanged.connect(self.set_target)
        tb.addWidget(self.target_box)
        tb.addSeparator()
        tb.addAction(self.cast_action)
        tb.addAction(self.compare_action)
        tb.addSeparator()
        tb.addAction(self.tree_action)
        self.toolbar = tb

        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(6, 6, 6, 6)
        self.message_bar = MessageBar()
        outer.addWidget(self.message_bar)
        self.stack = QStackedWidget()
        outer.addWidget(self.stack, 1)
        self.setCentralWidget(central)

        # -- empty state --
        empty = QWidget()
        ev = QVBoxLayout(empty)
        ev.addStretch(2)
        self.empty_label = QLabel(EMPTY_TEXT)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        f = self.empty_label.font()
        f.setPointSizeF(f.pointSizeF() * 1.6)
        self.empty_label.setFont(f)
        self.empty_label.setWordWrap(True)
        sub = QLabel(
            "or use File ▸ Open (Ctrl+O). Tensors whose dtype differs from the model dtype are "
            "highlighted; Cast & Save (Ctrl+S) fixes them and plots the precision lost.\n"
            "Shift+drop a second checkpoint to compare against it."
        )
        sub.setAlignment(Qt.AlignmentFlag.AlignCenter)
        sub.setWordWrap(True)
        open_btn = QPushButton("Open…")
        open_btn.clicked.connect(self.choose_file)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(open_btn)
        row.addStretch(1)
        self.recent_label = QLabel()
        self.recent_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.recent_label.setTextFormat(Qt.TextFormat.RichText)
        self.recent_label.linkActivated.connect(self.open_path)
        ev.addWidget(self.empty_label)
        ev.addWidget(sub)
        ev.addLayout(row)
        ev.addSpacing(12)
        ev.addWidget(self.recent_label)
        ev.addStretch(3)
        self.stack.addWidget(empty)

        # -- loaded --
        page = QWidget()
        pv = QVBoxLayout(page)
        pv.setContentsMargins(0, 0, 0, 0)
        self.h_split = QSplitter(Qt.Orientation.Horizontal)
        pv.addWidget(self.h_split)

        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        frow = QHBoxLayout()
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText(
            "Filter names (Ctrl+F): words or globs, e.g. layer.1 *.weight"
        )
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setAccessibleName("Filter tensor names")
        self._filter_timer = QTimer(self, singleShot=True, interval=150)
        self._filter_timer.timeout.connect(self._apply_filter)
        self.filter_edit.textChanged.connect(lambda _t: self._filter_timer.start())
        self.only_differing = QCheckBox("Only differing")
        self.only_differing.setToolTip(
            "Show only float tensors whose dtype differs from the model dtype"
        )
        self.only_differing.toggled.connect(self._apply_only_differing)
        self.only_differing_action = QAction("Only &Differing Tensors", self, checkable=True)
        self.only_differing_action.setShortcut(QKeySequence("Ctrl+D"))
        self.only_differing_action.toggled.connect(self.only_differing.setChecked)
        self.only_differing.toggled.connect(self.only_differing_action.setChecked)
        self.count_label = QLabel()
        frow.addWidget(self.filter_edit, 1)
        frow.addWidget(self.only_differing)
        frow.addWidget(self.count_label)
        lv.addLayout(frow)

        self.model = TensorTableModel(self)
        self.proxy = TensorFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        vh = self.table.verticalHeader()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.fontMetrics().height() + 6)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        fm = self.fontMetrics()
        widths = {
            Col.DTYPE: "BF16W",
            Col.SHAPE: "[1000, 64]",
            Col.PARAMS: "12,345,678",
            Col.SIZE: "1023.9 KiB",
            Col.STATUS: "WW differs: BF16 → F32",
            Col.CAST_ERR: "0 (lossless)",
            Col.REF_DIFF: "0 (equal)W",
        }
        for col, sample in widths.items():
            self.table.setColumnWidth(col, fm.horizontalAdvance(sample) + 24)
        hh.setMinimumSectionSize(40)
        self.table.setSortingEnabled(True)
        hh.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.table.setColumnHidden(Col.CAST_ERR, True)
        self.table.setColumnHidden(Col.REF_DIFF, True)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_row)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.copy_name_action = QAction("Copy Tensor Name", self.table)
        self.copy_name_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_name_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.copy_name_action.triggered.connect(self.copy_current_name)
        self.table.addAction(self.copy_name_action)

        self.left_split = QSplitter(Qt.Orientation.Vertical)
        table_box = QWidget()
        tv = QVBoxLayout(table_box)
        tv.setContentsMargins(0, 0, 0, 0)
        tv.addWidget(self.table, 1)
        self.summary_label = QLabel()
        self.summary_label.setAccessibleName("Summary")
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary_label.setWordWrap(True)
        tv.addWidget(self.summary_label)
        self.module_tree = ModuleTree()
        self.module_tree.prefix_selected.connect(self._filter_prefix)
        self.module_tree.hide()
        self._tree_dirty = True
        self.tree_split = QSplitter(Qt.Orientation.Horizontal)
        self.tree_split.addWidget(self.module_tree)
        self.tree_split.addWidget(table_box)
        self.tree_split.setStretchFactor(1, 1)
        self.tree_split.setSizes([260, 600])
        self.left_split.addWidget(self.tree_split)

        # bottom: what loaders do (hint), precision lost by the cast, difference to the reference
        self.plots_tabs = QTabWidget()
        self.plots_tabs.setDocumentMode(True)
        self.hint = HintPanel()
        self.precision_plot = OverviewPlot(
            title="Max relative error per tensor", ylabel="max rel. error"
        )
        self.diff_plot = OverviewPlot(
            title="Max |Δ| per tensor vs reference", ylabel="max |Δ|", labels=("differs", "equal")
        )
        self.precision_panel = OverviewPanel(self.precision_plot)
        self.diff_panel = OverviewPanel(self.diff_plot)
        self.precision_plot.tensor_clicked.connect(self.select_tensor)
        self.diff_plot.tensor_clicked.connect(self.select_tensor)
        self.plots_tabs.addTab(self.hint, "Why it matters")
        self.plots_tabs.addTab(self.precision_panel, "Precision lost (cast)")
        self.plots_tabs.addTab(self.diff_panel, "Difference to reference")
        self.plots_tabs.hide()
        self.left_split.addWidget(self.plots_tabs)
        self.left_split.setStretchFactor(0, 3)
        self.left_split.setStretchFactor(1, 2)
        self.left_split.setChildrenCollapsible(False)
        lv.addWidget(self.left_split, 1)

        self.details = DetailsPane()
        self.h_split.addWidget(left)
        self.h_split.addWidget(self.details)
        self.h_split.setStretchFactor(0, 3)
        self.h_split.setStretchFactor(1, 2)
        self.h_split.setSizes([820, 460])
        self.table.installEventFilter(self)
        self.left_split.installEventFilter(self)
        self.table.horizontalHeader().sectionResized.connect(self._section_resized)
        self.stack.addWidget(page)

        # -- status bar --
        sb = self.statusBar()
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(260)
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress_label = QLabel()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop; nothing partial is left on disk")
        self.cancel_button.clicked.connect(self.cancel_job)
        sb.addPermanentWidget(self.progress_label)
        sb.addPermanentWidget(self.progress)
        sb.addPermanentWidget(self.cancel_button)
        self._show_progress(False)

    def _disable_child_drops(self) -> None:
        """Drops anywhere land on the window: no child claims file URLs for itself."""
        for w in self.findChildren(QWidget):
            if w is not self:
                w.setAcceptDrops(False)
        self.table.viewport().setAcceptDrops(False)

    # =====================================================================================
    # opening
    # =====================================================================================
    def open_path(self, path: str) -> Worker:
        """Open in the background; on failure the message bar says why and nothing changes."""
        path = os.path.abspath(os.path.expanduser(os.fspath(path)))
        self.workers.cancel_all("open")
        w = FunctionWorker(open_and_index, path, name="open")
        w.finished.connect(lambda res, p=path: self._opened(res, p))
        w.errored.connect(lambda e, p=path: self._open_failed(p, e))
        w.aborted.connect(lambda: None)
        self._busy(f"Opening {os.path.basename(path.rstrip(os.sep)) or path}…")
        self.workers.start(w)
        return w

    def _opened(self, res: tuple[Checkpoint, DTypeGroups], path: str) -> None:
        self._idle()
        ckpt, groups = res
        self.set_checkpoint(ckpt, path, groups)

    def _open_failed(self, path: str, e: BaseException) -> None:
        self._idle()
        msg = error_text(path, e)
        self.show_error(
            f"Could not open {msg}"
            + (" — still showing the previous checkpoint." if self.ckpt is not None else "")
        )
        self.load_failed.emit(msg)
        if isinstance(e, AmbiguousCheckpointError) and e.choices:
            self._offer_choice(e.choices)

    def _offer_choice(self, choices: list[str]) -> None:
        """A folder with several index variants or unjoined files: let the person pick one."""
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Open which checkpoint?")
        dialog.setLabelText("This folder holds several checkpoints. Open:")
        dialog.setComboBoxItems([os.path.basename(c) for c in choices])
        dialog.setComboBoxEditable(False)
        by_name = {os.path.basename(c): c for c in choices}
        dialog.textValueSelected.connect(lambda name: self.open_path(by_name[name]))
        self.choice_dialog = dialog
        dialog.open()  # window-modal, not blocking: the event loop (and tests) go on

    def set_checkpoint(
        self, ckpt: Checkpoint, path: str | None = None, groups: DTypeGroups | None = None
    ) -> None:
        """Show ``ckpt``. ``groups`` (from :func:`open_and_index` on a worker) saves a pass."""
        self.workers.cancel_all("stats")
        self.workers.cancel_all("before_after")
        old = self.ckpt
        self.ckpt = ckpt
        self._reset_cast()
        self.diffs = None
        self._groups = groups if groups is not None else DTypeGroups(ckpt.tensors)
        self.model.set_rows(ckpt.tensors, self._target, self._groups.dtype_names)
        self._refresh_tree()
        self.table.setColumnHidden(Col.REF_DIFF, True)
        self.diff_plot.clear_data()
        self._update_summary()
        self.stack.setCurrentIndex(1)
        self.message_bar.hide()
        shown = path or ckpt.path
        self.setWindowTitle(f"{os.path.basename(shown.rstrip(os.sep))} — {APP_TITLE}")
        self.add_recent(shown)
        self._update_actions()
        self._update_plots_visibility()
        self.select_first_interesting()
        if old is not None and old is not self.reference:
            old.close()
        self.loaded.emit(shown)
        if self.reference is not None:
            self._start_diff()

    def _reset_cast(self) -> None:
        self.cast_report = None
        self.cast_output = None
        if self._out_opener is not None:
            self._out_opener.close()
        self._out_opener = None
        self._ba_cache.clear()
        self.model.set_cast_report(None)
        self.table.setColumnHidden(Col.CAST_ERR, True)
        self.precision_plot.clear_data()

    def choose_file(self) -> None:
        start = self._last_dir()
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Open checkpoint",
            start,
            "safetensors (*.safetensors *.safetensors.index.json *.json);;All files (*)",
        )
        if path:
            self.open_path(path)

    def choose_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open model folder", self._last_dir())
        if path:
            self.open_path(path)

    def _last_dir(self) -> str:
        recent = self.recent_files()
        return os.path.dirname(recent[0]) if recent else os.path.expanduser("~")

    # -- recent ---------------------------------------------------------------------------
    def recent_files(self) -> list[str]:
        value = self.settings.value("recent", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def add_recent(self, path: str) -> None:
        items = [p for p in self.recent_files() if p != path]
        items.insert(0, path)
        self.settings.setValue("recent", items[:MAX_RECENT])
        self._update_recent_label()

    def _update_recent_label(self) -> None:
        from html import escape

        items = self.recent_files()[:5]
        if not items:
            self.recent_label.setText("")
            return
        links = "<br>".join(f'<a href="{escape(p, quote=True)}">{escape(p)}</a>' for p in items)
        self.recent_label.setText(f"<b>Recent</b><br>{links}")

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        items = self.recent_files()
        if not items:
            a = self.recent_menu.addAction("(none)")
            a.setEnabled(False)
            return
        for p in items:
            a = self.recent_menu.addAction(p)
            a.triggered.connect(lambda _=False, p=p: self.open_path(p))
        self.recent_menu.addSeparator()
        clear = self.recent_menu.addAction("Clear List")
        clear.triggered.connect(lambda: self.settings.setValue("recent", []))

    # =====================================================================================
    # drag & drop
    # =====================================================================================
    @staticmethod
    def _local_paths(ev: QDropEvent | QDragEnterEvent) -> list[str]:
        md = ev.mimeData()
        if md is None or not md.hasUrls():
            return []
        return [u.toLocalFile() for u in md.urls() if u.isLocalFile()]

    @staticmethod
    def _has_urls(ev: QDropEvent | QDragEnterEvent) -> bool:
        md = ev.mimeData()
        return md is not None and md.hasUrls()

    def dragEnterEvent(self, ev: QDragEnterEvent) -> None:
        # any URL is accepted so that a drop we cannot open still gets an explanation
        if self._has_urls(ev):
            ev.acceptProposedAction()
            self.statusBar().showMessage(
                "Drop to open · hold Shift to compare with it as reference", 3000
            )
        else:
            ev.ignore()

    def dragMoveEvent(self, ev: QDragMoveEvent) -> None:
        if self._has_urls(ev):
            ev.acceptProposedAction()
        else:
            ev.ignore()

    def dropEvent(self, ev: QDropEvent) -> None:
        paths = self._local_paths(ev)
        if not paths:
            md = ev.mimeData()
            if md is not None and md.hasUrls():
                ev.acceptProposedAction()
                self.show_error(
                    "Only local files and folders can be opened (that was a remote URL)."
                )
            else:
                ev.ignore()
            return
        ev.acceptProposedAction()
        path = self._path_from_drop(paths)
        if path is None:
            return
        mods = ev.modifiers()
        as_ref = bool(mods & (Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.AltModifier))
        if as_ref and self.ckpt is not None:
            self.open_reference(path)
        else:
            self.open_path(path)

    def _path_from_drop(self, paths: list[str]) -> str | None:
        if len(paths) == 1:
            return paths[0]
        folders = {os.path.dirname(os.path.abspath(p)) for p in paths}
        if len(folders) == 1 and all(p.endswith(".safetensors") for p in paths):
            return folders.pop()  # several shards: their folder holds the index
        self.show_error(
            f"{len(paths)} items were dropped; drop one checkpoint at a time "
            "(a .safetensors file, an index.json, or a model folder)."
        )
        self.load_failed.emit("several items dropped")
        return None

    # =====================================================================================
    # target dtype, summary, filter
    # =====================================================================================
    @property
    def target(self) -> DType:
        return self._target

    def set_target(self, name: str) -> None:
        dt = DTYPES[name.upper()]
        if self.target_box.currentText() != dt.name:
            self.target_box.setCurrentText(dt.name)  # re-enters through the signal
            return
        if dt.name == self._target.name and self.model.target is not None:
            return
        self._target = dt
        self.settings.setValue("target", dt.name)
        self.model.set_target(dt)
        self._refresh_tree()
        if self.proxy.only_differing:
            self.proxy.refresh()
        self._update_summary()
        if self._current is not None and self.ckpt is not None:
            st = tensor_status(self._current, dt)
            self.details.fields["DType"].setText(
                f"{self._current.dtype.name} — {status_text(st, self._current, dt)}"
            )

    def _update_summary(self) -> None:
        if self.ckpt is None:
            self.summary = None
            self.summary_label.setText("")
            self.hint.update_summary(None)
            self._update_plots_visibility()
            return
        self.summary = self._groups.summary(self._target)
        text = self.summary.line()
        text = f"⚠ {text}" if self.summary.n_differ else f"✓ {text}"
        self.summary_label.setText(text)
        self.hint.update_summary(self.summary)
        self._update_plots_visibility()
        if self.hint.active and self.cast_report is None and self.diffs is None:
            self.plots_tabs.setCurrentWidget(self.hint)
        self._update_count()

    def _update_count(self) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        self.count_label.setText(
            f"{shown:,} of {total:,}" if shown != total else f"{total:,} tensors"
        )

    def _apply_filter(self) -> None:
        self.proxy.set_name_filter(self.filter_edit.text())
        self._update_count()

    def _apply_only_differing(self, on: bool) -> None:
        self.proxy.set_only_differing(on)
        self._update_count()

    # -- module tree ----------------------------------------------------------------------
    def show_module_tree(self, on: bool) -> None:
        if self.tree_action.isChecked() != on:
            self.tree_action.setChecked(on)
            return
        self.module_tree.setVisible(on)
        if on and self._tree_dirty:
            self._refresh_tree()

    def _refresh_tree(self) -> None:
        if not self.module_tree.isVisibleTo(self):
            self._tree_dirty = True
            return
        self._tree_dirty = False
        names = [t.name for t in self.model.tensors]
        self.module_tree.set_tensors(names, self.model.statuses())

    def _filter_prefix(self, prefix: str) -> None:
        self.filter_edit.setText(f"{prefix}*" if prefix else "")
        self._filter_timer.stop()
        self._apply_filter()

    def _focus_filter(self) -> None:
        self.filter_edit.setFocus()
        self.filter_edit.selectAll()

    # =====================================================================================
    # selection and details
    # =====================================================================================
    def select_first_interesting(self) -> None:
        if self.proxy.rowCount() == 0:
            self.details.clear()
            self._current = None
            return
        row = 0
        statuses = self.model.statuses()
        for r in range(min(self.proxy.rowCount(), 5000)):
            src = self.proxy.mapToSource(self.proxy.index(r, 0))
            if statuses[self.model.tensor_index(src.row())] == "differs":
                row = r
                break
        self._select_proxy_row(row)

    def select_tensor(self, name: str) -> bool:
        r = self.model.row_of(name)
        if r < 0:
            return False
        pidx = self.proxy.mapFromSource(self.model.index(r, 0))
        if not pidx.isValid():  # filtered out: clear the filter so it can be shown
            self.filter_edit.clear()
            self._apply_filter()
            self.only_differing.setChecked(False)
            pidx = self.proxy.mapFromSource(self.model.index(r, 0))
        self._select_proxy_row(pidx.row())
        return True

    def _select_proxy_row(self, row: int) -> None:
        idx = self.proxy.index(row, 0)
        sm = self.table.selectionModel()
        sm.setCurrentIndex(
            idx,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.table.scrollTo(idx)

    def copy_current_name(self) -> None:
        if self._current is not None:
            QApplication.clipboard().setText(self._current.name)

    def current_tensor(self) -> TensorInfo | None:
        return self._current

    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid() or self.ckpt is None:
            return
        src = self.proxy.mapToSource(current)
        t = self.model.tensor_at(src.row())
        if self._current is t:
            return
        self._current = t
        self._show_details(t)

    def _show_details(self, t: TensorInfo) -> None:
        ckpt = self.ckpt
        assert ckpt is not None
        st = tensor_status(t, self._target)
        self.details.show_tensor(ckpt, t, status_text(st, t, self._target))
        self.precision_plot.mark(t.name)
        self.diff_plot.mark(t.name)
        self._pending = {"stats"}
        key = (ckpt.path, t.name)
        cached = self._stats_cache.get(key)
        if cached is not None:
            self._stats_ready(key, cached)
        else:
            self.workers.cancel_all("stats")
            w = JobWorker(lambda c=ckpt, t=t: stats_and_histogram_job(c, t), name="stats")
            w.finished.connect(lambda res, k=key: self._stats_ready(k, res))
            w.errored.connect(lambda e, k=key: self._stats_failed(k, e))
            self.workers.start(w)
        self.details.set_reference(self.model.diff_result(t.name))
        self._request_before_after(t)

    def _is_current(self, key: tuple[str, str]) -> bool:
        return (
            self.ckpt is not None
            and self._current is not None
            and key == (self.ckpt.path, self._current.name)
        )

    def _stats_ready(self, key: tuple[str, str], res: tuple[Any, Any, Any]) -> None:
        self._stats_cache[key] = res
        if len(self._stats_cache) > 512:
            self._stats_cache.pop(next(iter(self._stats_cache)))
        if not self._is_current(key):
            return
        self.details.set_stats(*res)
        self._done_pending("stats")

    def _stats_failed(self, key: tuple[str, str], e: BaseException) -> None:
        if self._is_current(key):
            self.details.set_stats_error(error_text(None, e))
            self._done_pending("stats")

    def _done_pending(self, what: str) -> None:
        self._pending.discard(what)
        if not self._pending and self._current is not None:
            self.details_ready.emit(self._current.name)

    def _request_before_after(self, t: TensorInfo) -> None:
        rep = self.model.cast_result(t.name)
        if self._out_opener is None or self.ckpt is None or self.cast_report is None:
            return
        if rep is None:
            if not t.dtype.is_float:
                why = "not a float"
            elif t.dtype.name == self.cast_report.target:
                why = f"already {t.dtype.name}"
            else:
                why = "kept by a pattern, or a format torch cannot cast exactly"
            self.details.fields["Cast"].setText(f"written unchanged as {t.dtype.name} ({why})")
            return
        self.details.set_cast(rep)
        if rep.from_ == rep.to:
            return
        self._pending.add("before_after")
        key = (self._out_opener.path, t.name)
        cached = self._ba_cache.get(key)
        if cached is not None:
            self._ba_ready(key, cached, t.name)
            return
        w = FunctionWorker(_before_after_job, self.ckpt, t, self._out_opener, name="before_after")
        w.finished.connect(lambda ba, k=key, n=t.name: self._ba_ready(k, ba, n))
        w.errored.connect(lambda e, n=t.name: self._ba_failed(n, e))
        self.workers.start(w)

    def _ba_ready(self, key: tuple[str, str], ba: BeforeAfter, name: str) -> None:
        self._ba_cache[key] = ba
        if self._current is None or self._current.name != name:
            return
        self.details.set_before_after(ba, self.model.cast_result(name))
        self._done_pending("before_after")

    def _ba_failed(self, name: str, e: BaseException) -> None:
        if self._current is not None and self._current.name == name:
            self.details.error_plot.clear_data(
                f"Could not read the saved file: {error_text(None, e)}"
            )
            self._done_pending("before_after")

    # =====================================================================================
    # cast & save
    # =====================================================================================
    def open_cast_dialog(self) -> CastDialog | None:
        if self.ckpt is None or self._job_running():
            return None
        dlg = CastDialog(self.ckpt, self._target, self, keep=str(self.settings.value("keep", "")))
        dlg.accepted.connect(lambda d=dlg: self._cast_dialog_accepted(d))
        dlg.finished.connect(dlg.deleteLater)
        self._cast_dialog = dlg
        dlg.open()
        return dlg

    @property
    def cast_dialog(self) -> CastDialog | None:
        return self._cast_dialog

    def _cast_dialog_accepted(self, dlg: CastDialog) -> None:
        self.settings.setValue("keep", dlg.keep_edit.text())
        self.start_cast(dlg.output, dlg.target, dlg.keep)

    def start_cast(
        self, out: str, target: DType | None = None, keep: tuple[str, ...] = ()
    ) -> Worker | None:
        from inspector.core.convert import cast_checkpoint

        ckpt = self.ckpt
        if ckpt is None or self._job_running():
            return None
        target = target or self._target
        out = os.path.abspath(out)
        w = JobWorker(
            lambda: cast_checkpoint(ckpt, target, out, keep=keep, report=True), name="cast"
        )
        w.progress.connect(self._job_progress)
        w.finished.connect(lambda report, o=out, c=ckpt: self._cast_finished(report, o, c))
        w.errored.connect(lambda e, o=out: self._cast_errored(o, e))
        w.aborted.connect(self._cast_aborted)
        w.done.connect(self._job_done)
        self._start_job(w, f"Casting to {target.name}")
        return w

    def _cast_finished(self, report: Any, out: str, source: Checkpoint | None = None) -> None:
        if source is not None and source is not self.ckpt:
            # another checkpoint was opened meanwhile: the file is saved, the plots would lie
            self.message_bar.show_message(
                f"Saved {os.path.basename(out.rstrip(os.sep))} (cast of a checkpoint no longer "
                "shown).",
                "ok",
                "Open the saved file",
                lambda: self.open_path(out),
            )
            self.cast_done.emit(report)
            return
        self._reset_cast()
        self.cast_report = report
        self.cast_output = out
        self._out_opener = _OutputOpener(out)
        self.model.set_cast_report(report.tensors)
        self.table.setColumnHidden(Col.CAST_ERR, False)
        self._update_precision_plot()
        self._update_plots_visibility()
        self.plots_tabs.setCurrentWidget(self.precision_panel)
        changed = [r for r in report.tensors if r.from_ != r.to]
        lossless = sum(1 for r in changed if r.lossless)
        elapsed = time.monotonic() - self._job_started
        self.message_bar.show_message(
            f"Saved {os.path.basename(out.rstrip(os.sep))} in {elapsed:.1f} s: {len(changed)} "
            f"tensors cast to {report.target}, {lossless} of them lossless.",
            "ok",
            "Open the saved file",
            lambda: self.open_path(out),
        )
        if self._current is not None:
            self._show_details(self._current)
        self.cast_done.emit(report)

    def _cast_errored(self, out: str, e: BaseException) -> None:
        msg = error_text(out, e)
        self.last_error = msg
        box = QMessageBox(
            QMessageBox.Icon.Critical, "Cast failed", f"Could not save {msg}", parent=self
        )
        box.setInformativeText("Nothing was written.")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.error_box = box
        box.open()
        self.cast_failed.emit(msg)

    def _cast_aborted(self) -> None:
        self.statusBar().showMessage("Cast cancelled: nothing was written.", 5000)
        self.cast_cancelled.emit()

    def _update_precision_plot(self) -> None:
        rep = self.cast_report
        if rep is None:
            self.precision_plot.clear_data()
            return
        # x is the file order of every tensor; tensors the cast left alone have no point
        by_name = {r.name: r for r in rep.tensors if r.from_ != r.to}
        names, values = [], []
        for t in self.ckpt.tensors if self.ckpt is not None else ():
            names.append(t.name)
            r = by_name.get(t.name)
            values.append(cast_error_value(r))
        n_changed = sum(v is not None for v in values)
        n_lossless = sum(v == 0 for v in values if v is not None)
        counts = _sum_counts(rep.tensors)
        self.precision_plot.set_values(
            names, values, f"Max relative error per tensor, cast to {rep.target}"
        )
        out = os.path.basename((self.cast_output or "").rstrip(os.sep))
        self.precision_panel.set_caption(
            f"<b>{n_changed} tensors cast to {rep.target}</b> ({out}): {n_lossless} lossless · "
            f"overflow {counts[0]:,} · underflow {counts[1]:,} · NaN {counts[2]:,}"
        )

    # =====================================================================================
    # compare with a reference
    # =====================================================================================
    def choose_reference(self) -> None:
        if self.ckpt is None:
            self.show_error("Open a checkpoint first, then compare it with a reference.")
            return
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Open reference checkpoint",
            self._last_dir(),
            "safetensors (*.safetensors *.safetensors.index.json *.json);;All files (*)",
        )
        if path:
            self.open_reference(path)

    def open_reference(self, path: str) -> Worker:
        path = os.path.abspath(path)
        w = FunctionWorker(open_checkpoint, path, name="open_ref")
        w.finished.connect(self._reference_opened)
        w.errored.connect(lambda e, p=path: self._reference_failed(p, e))
        self._busy(f"Opening reference {os.path.basename(path)}…")
        self.workers.start(w)
        return w

    def _reference_opened(self, ref: Checkpoint) -> None:
        self._idle()
        if self.reference is not None and self.reference is not self.ckpt:
            self.reference.close()
        self.reference = ref
        self._update_actions()
        self._start_diff()

    def _reference_failed(self, path: str, e: BaseException) -> None:
        self._idle()
        msg = error_text(path, e)
        self.show_error(f"Could not open the reference {msg}")
        self.diff_failed.emit(msg)

    def _start_diff(self) -> None:
        from inspector.core.diff import diff_checkpoints

        a, b = self.ckpt, self.reference
        if a is None or b is None:
            return
        if self._job_running():
            self.workers.cancel_all("diff")
        w = JobWorker(lambda: diff_checkpoints(a, b), name="diff")
        w.progress.connect(self._job_progress)
        w.finished.connect(
            lambda diffs, a=a, b=b: (
                self._diff_finished(diffs) if a is self.ckpt and b is self.reference else None
            )
        )
        w.errored.connect(self._diff_errored)
        w.done.connect(self._job_done)
        self._start_job(w, f"Comparing with {os.path.basename(b.path)}")

    def _diff_finished(self, diffs: list[Any]) -> None:
        self.diffs = diffs
        self.model.set_diff(diffs)
        self.table.setColumnHidden(Col.REF_DIFF, False)
        in_a = [d for d in diffs if d.status != "only_b"]
        values = [d.max_abs_diff for d in in_a]
        n_equal = sum(1 for d in in_a if d.max_abs_diff == 0)
        n_differ = sum(1 for d in in_a if d.max_abs_diff)
        worst = max((v for v in values if v is not None), default=0.0)
        ref = os.path.basename(self.reference.path) if self.reference else "reference"
        self.diff_plot.set_values([d.name for d in in_a], values, f"Max |Δ| per tensor vs {ref}")
        self.diff_panel.set_caption(
            f"<b>{n_differ} tensors differ from {ref}</b> (worst max |Δ| {worst:.3g}), "
            f"{n_equal} equal"
        )
        self._update_plots_visibility()
        self.plots_tabs.setCurrentWidget(self.diff_panel)
        other = [d for d in diffs if d.status in ("only_a", "only_b", "shape_mismatch")]
        extra = f"; {len(other)} only in one file or shaped differently" if other else ""
        self.message_bar.show_message(
            f"Compared with {ref}: {n_differ} tensors differ (worst max |Δ| {worst:.3g}), "
            f"{n_equal} are equal{extra}.",
            "info",
        )
        if self._current is not None:
            self.diff_plot.mark(self._current.name)
            self.details.set_reference(self.model.diff_result(self._current.name))
        self.diff_done.emit(diffs)

    def _diff_errored(self, e: BaseException) -> None:
        msg = error_text(None, e)
        self.show_error(f"Comparison failed: {msg}")
        self.diff_failed.emit(msg)

    def clear_reference(self) -> None:
        self.workers.cancel_all("diff")
        if self.reference is not None and self.reference is not self.ckpt:
            self.reference.close()
        self.reference = None
        self.diffs = None
        self.model.set_diff(None)
        self.table.setColumnHidden(Col.REF_DIFF, True)
        self.diff_plot.clear_data()
        self._update_plots_visibility()
        self._update_actions()

    # =====================================================================================
    # jobs in the status bar
    # =====================================================================================
    def _job_running(self) -> bool:
        return self._job is not None and not self._job.is_done

    def _start_job(self, w: Worker, label: str) -> None:
        self._job = w
        self._job_label = label
        self._job_started = time.monotonic()
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress_label.setText(label + "…")
        self._show_progress(True)
        self._update_actions()
        self.workers.start(w)

    def _job_progress(self, p: Progress) -> None:
        self.progress.setValue(int(p.fraction * 1000))
        self.progress.setFormat(f"{format_bytes(p.done)} / {format_bytes(p.total)}")
        name = f" — {p.name}" if p.name else ""
        if len(name) > 50:
            name = " — …" + p.name[-44:]
        self.progress_label.setText(f"{self._job_label}{name}")

    def _job_done(self) -> None:
        if self._job is not None and self._job.is_done:
            self._job = None
            self._show_progress(False)
            self._update_actions()

    def cancel_job(self) -> None:
        if self._job is not None:
            self._job.cancel()
            self.progress_label.setText("Cancelling…")

    def _show_progress(self, on: bool) -> None:
        self.progress.setVisible(on)
        self.progress_label.setVisible(on)
        self.cancel_button.setVisible(on)

    def _busy(self, text: str) -> None:
        self.statusBar().showMessage(text)
        if not self._job_running():
            self.progress.setRange(0, 0)
            self.progress.setVisible(True)

    def _idle(self) -> None:
        self.statusBar().clearMessage()
        if not self._job_running():
            self.progress.setRange(0, 1000)
            self.progress.setVisible(False)

    # =====================================================================================
    # misc
    # =====================================================================================
    def _update_actions(self) -> None:
        has = self.ckpt is not None
        busy = self._job_running()
        self.cast_action.setEnabled(has and not busy)
        self.compare_action.setEnabled(has)
        self.clear_reference_action.setEnabled(self.reference is not None)

    def _update_plots_visibility(self) -> None:
        have_hint = self.summary is not None and self.summary.n_differ > 0
        have_cast = self.cast_report is not None
        have_diff = self.diffs is not None
        self.plots_tabs.setTabVisible(0, have_hint)
        self.plots_tabs.setTabVisible(1, have_cast)
        self.plots_tabs.setTabVisible(2, have_diff)
        self.plots_tabs.setVisible(have_hint or have_cast or have_diff)
        total = sum(self.left_split.sizes()) or self.left_split.height()
        if have_cast or have_diff:
            bottom = max(260, int(total * 0.42))
            self.plots_tabs.setMaximumHeight(16_777_215)
        else:  # the hint alone: only as tall as its text at the current width
            width = max(self.left_split.width() - 8, 300)
            hint_h = self.hint.heightForWidth(width)
            if hint_h <= 0:
                hint_h = self.hint.sizeHint().height()
            bottom = hint_h + self.plots_tabs.tabBar().sizeHint().height() + 8
            self.plots_tabs.setMaximumHeight(bottom)
        self.left_split.setSizes([max(total - bottom, 120), bottom])
        self._fit_name_column()

    # -- the name column takes the room the other columns leave (never less than a minimum) --
    def eventFilter(self, obj: Any, ev: Any) -> bool:
        if obj is self.table and ev.type() == ev.Type.Resize:
            QTimer.singleShot(0, self._fit_name_column)
        elif (
            obj is self.left_split
            and ev.type() == ev.Type.Resize
            and self.cast_report is None
            and self.diffs is None
            and self.hint.active
        ):
            QTimer.singleShot(0, self._update_plots_visibility)
        return super().eventFilter(obj, ev)

    def _section_resized(self, index: int, _old: int, _new: int) -> None:
        if index != Col.NAME:
            self._fit_name_column()

    def _fit_name_column(self) -> None:
        hh = self.table.horizontalHeader()
        others = sum(
            self.table.columnWidth(c)
            for c in range(1, len(Col))
            if not self.table.isColumnHidden(c)
        )
        avail = self.table.viewport().width() - others
        width = max(avail, self.fontMetrics().horizontalAdvance("encoder.layer.00.attention.q.w"))
        if hh.sectionSize(Col.NAME) != width:
            hh.blockSignals(True)
            self.table.setColumnWidth(Col.NAME, width)
            hh.blockSignals(False)
            hh.viewport().update()

    def show_error(self, text: str) -> None:
        self.last_error = text
        self.message_bar.show_message(text, "error")

    def closeEvent(self, ev: QCloseEvent) -> None:
        self.workers.cancel_all()
        self.workers.wait(10_000)
        for c in (self.ckpt, self.reference):
            if c is not None:
                c.close()
        if self._out_opener is not None:
            self._out_opener.close()
        super().closeEvent(ev)


def _sum_counts(tensors: list[Any]) -> tuple[int, int, int]:
    o = u = n = 0
    for r in tensors:
        o += r.overflow or 0
        u += r.underflow or 0
        n += r.nan or 0
    return o, u, n


def window_icon() -> QIcon:
    from inspector.assets import resource_path

    for name in ("checkpoint-inspector.png", "checkpoint-inspector.svg"):
        p = resource_path("icons", name)
        if p.is_file():
            return QIcon(str(p))
    return QIcon()
