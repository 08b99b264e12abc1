"""The page of an open checkpoint: filter row, tensor table, summary line, module tree, plot tabs
and the details pane. It lays them out and keeps the name column wide; it holds no state of
its own beyond what its widgets show (the session holds that)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.core.status import TensorStatus

from .details_pane import DetailsPane
from .i18n import translate
from .module_tree import ModuleTree
from .name_delegate import NameDelegate
from .plot_tabs import PlotTab, PlotTabs
from .table_columns import TableColumns
from .table_text import summary_text
from .tensor_columns import Col
from .tensor_filter import TensorFilter
from .tensor_table import TensorTableModel

if TYPE_CHECKING:
    from inspector.core.formats.torch_pickle import PickleFacts
    from inspector.core.layout import TensorInfo
    from inspector.core.model_folder.config import ConfigMismatch
    from inspector.core.model_folder.findings import Finding
    from inspector.core.quant.layout import QuantLayout
    from inspector.core.summary import Summary


class TensorPage(QWidget):
    sig_current_changed = Signal(object)  # the TensorInfo now current in the table, or None
    sig_hidden_columns_changed = Signal(list)  # names of the columns the person hid
    sig_copy_name = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        pv = QVBoxLayout(self)
        pv.setContentsMargins(0, 0, 0, 0)
        self.h_split = QSplitter(Qt.Orientation.Horizontal)
        pv.addWidget(self.h_split)
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addLayout(self._build_filter_row())
        self.model = TensorTableModel(self)
        # a filter, a sort, or a target change under "only differing" may hide the current row
        self.model.layoutChanged.connect(self._after_filter)
        self.table = self._build_table()
        self.left_split = QSplitter(Qt.Orientation.Vertical)
        table_box = QWidget()
        tv = QVBoxLayout(table_box)
        tv.setContentsMargins(0, 0, 0, 0)
        tv.addWidget(self.table, 1)
        self.summary_label = QLabel()
        self.summary_label.setAccessibleName(translate("TensorPage", "Summary"))
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary_label.setWordWrap(True)
        tv.addWidget(self.summary_label)
        self.module_tree = ModuleTree()
        self.module_tree.prefix_selected.connect(self.filter_prefix)
        self.module_tree.hide()
        self._tree_dirty = True
        self.tree_split = QSplitter(Qt.Orientation.Horizontal)
        self.tree_split.addWidget(self.module_tree)
        self.tree_split.addWidget(table_box)
        self.tree_split.setStretchFactor(1, 1)
        self.tree_split.setSizes([190, 600])
        self.left_split.addWidget(self.tree_split)
        self.plots_tabs = PlotTabs()
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
        self.h_split.setSizes([840, 440])
        self._details_placed_by_user = False
        self.h_split.splitterMoved.connect(
            lambda *_: setattr(self, "_details_placed_by_user", True)
        )
        self._tree_placed_by_user = False
        self.tree_split.splitterMoved.connect(
            lambda *_: setattr(self, "_tree_placed_by_user", True)
        )
        self.table.installEventFilter(self)
        self.left_split.installEventFilter(self)
        self.tree_split.installEventFilter(self)
        self.columns = TableColumns(self.table, self.fontMetrics())
        self.columns.sig_hidden_changed.connect(self.sig_hidden_columns_changed)
        self.model.modelReset.connect(self._dtypes_changed)
        self.model.modelReset.connect(self._names_changed)
        self._hint_only = False
        self._tabs: set[PlotTab] = set()  # the tabs shown, kept across a resize

    def _build_filter_row(self) -> QHBoxLayout:
        frow = QHBoxLayout()
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText(
            translate(
                "TensorPage",
                "Filter (Ctrl+F): any of these words or globs, e.g. embed lm_head *.bias · Esc clears",
            )
        )
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setAccessibleName(translate("TensorPage", "Filter tensor names"))
        self._filter_timer = QTimer(self, singleShot=True, interval=150)
        self._filter_timer.timeout.connect(self.apply_filter)
        self.filter_edit.textChanged.connect(lambda _t: self._filter_timer.start())
        clear = QShortcut(QKeySequence(Qt.Key.Key_Escape), self.filter_edit)
        clear.setContext(Qt.ShortcutContext.WidgetShortcut)
        clear.activated.connect(self.clear_filter)
        self.only_differing = QCheckBox(translate("TensorPage", "Only differing"))
        self.only_differing.setToolTip(
            translate(
                "TensorPage", "Show only float tensors whose dtype differs from the model dtype"
            )
        )
        self.only_differing.toggled.connect(self._apply_only_differing)
        self.show_scales = QCheckBox(translate("TensorPage", "Show scales"))
        self.show_scales.setToolTip(
            translate(
                "TensorPage",
                "Show each quantized weight's scales, zero points and shapes as rows of their own",
            )
        )
        self.show_scales.toggled.connect(lambda on: self._set_filter(show_companions=on))
        self.show_scales.hide()  # only a quantized checkpoint has any
        self.count_label = QLabel()
        frow.addWidget(self.filter_edit, 1)
        frow.addWidget(self.only_differing)
        frow.addWidget(self.show_scales)
        frow.addWidget(self.count_label)
        return frow

    def _build_table(self) -> QTableView:
        table = QTableView()
        table.setModel(self.model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setTextElideMode(Qt.TextElideMode.ElideLeft)  # other columns keep their tails
        self.name_delegate = NameDelegate(table)
        table.setItemDelegateForColumn(Col.NAME, self.name_delegate)
        table.setWordWrap(False)
        vh = table.verticalHeader()
        vh.hide()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.fontMetrics().height() + 6)
        hh = table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setMinimumSectionSize(40)
        table.setSortingEnabled(True)
        # the default view: differing tensors first, each group in natural name order
        hh.setSortIndicator(Col.STATUS, Qt.SortOrder.AscendingOrder)
        table.selectionModel().currentRowChanged.connect(self._on_current_row)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.copy_name_action = QAction(translate("TensorPage", "Copy Tensor Name"), table)
        self.copy_name_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_name_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.copy_name_action.triggered.connect(self.sig_copy_name)
        table.addAction(self.copy_name_action)
        return table

    # ---- public API -----------------------------------------------------------------------
    def set_summary(self, summary: Summary | None) -> None:
        if summary is None:
            self.summary_label.setText("")
        else:
            mark = "⚠" if summary.n_differ else "✓"
            self.summary_label.setText(f"{mark} {summary_text(summary)}")
        self.plots_tabs.set_summary(summary)
        self.update_count()

    def update_count(self) -> None:
        shown, total = self.model.rowCount(), len(self.model.tensors)
        if shown == 0 and total:
            text = translate("TensorPage", "no tensor matches")
        elif shown != total:
            text = translate("TensorPage", "{shown} of {total}").format(
                shown=f"{shown:,}", total=f"{total:,}"
            )
        else:
            text = translate("TensorPage", "{total} tensors").format(total=f"{total:,}")
        self.count_label.setText(text)

    def set_column_visible(self, col: Col, visible: bool) -> None:
        """Whether ``col`` has data to show (the cast and compare columns)."""
        self.columns.set_has_data(col, visible)

    def set_hidden_columns(self, names: list[str]) -> None:
        self.columns.set_hidden(names)

    def set_tree_visible(self, on: bool) -> None:
        self.module_tree.setVisible(on)
        if on:
            self._fit_tree()
        if on and self._tree_dirty:
            self.refresh_tree()

    def refresh_tree(self) -> None:
        if not self.module_tree.isVisibleTo(self):
            self._tree_dirty = True
            return
        self._tree_dirty = False
        self.module_tree.set_tensors([t.name for t in self.model.tensors], self.model.statuses())

    def apply_filter(self) -> None:
        self._filter_timer.stop()
        self._set_filter(text=self.filter_edit.text())

    def clear_filter(self) -> None:
        self.filter_edit.clear()
        self.apply_filter()

    def _after_filter(self) -> None:
        """The details never show a tensor the filter hides: the first shown one, or nothing."""
        self.update_count()
        shown = self.table.selectionModel().currentIndex().isValid()
        if not shown and not self.select_first_interesting():
            self.sig_current_changed.emit(None)

    def filter_prefix(self, prefix: str) -> None:
        self.filter_edit.setText(f"{prefix}*" if prefix else "")
        self.apply_filter()

    def focus_filter(self) -> None:
        self.filter_edit.setFocus()
        self.filter_edit.selectAll()

    def select_row_of(self, name: str) -> bool:
        """Make ``name`` the current row (clearing filters that hide it); False if unknown."""
        if not self.model.has_tensor(name):
            return False
        if self.model.row_of(name) < 0:  # hidden by the filter
            self.filter_edit.clear()
            self.apply_filter()
            self.only_differing.setChecked(False)
        if self.model.row_of(name) < 0:  # a quantized weight's scale, folded away
            self.show_scales.setChecked(True)
        self._select_row(self.model.row_of(name))
        return True

    def select_first_interesting(self) -> bool:
        """The first differing weight matrix in view order, else the first differing tensor,
        else the first row; False if no rows. A bias first (often all zeros) drew one bar at 0
        as the first plot a person sees; a matrix is what the precision plots are about."""
        n = self.model.rowCount()
        if n == 0:
            return False
        row = first = None
        statuses = self.model.statuses()
        for r in range(min(n, 5000)):
            if statuses[self.model.tensor_index(r)] is not TensorStatus.DIFFERS:
                continue
            first = r if first is None else first
            if len(self.model.tensor_at(r).shape) >= 2:
                row = r
                break
        if first is None:  # a quantized model: its codes matrices (values shown dequantized)
            first = self._first_quantized_matrix(n, statuses)
        self._select_row(row if row is not None else first if first is not None else 0)
        return True

    def _first_quantized_matrix(self, n: int, statuses: list) -> int | None:
        for r in range(min(n, 5000)):
            if statuses[self.model.tensor_index(r)] is not TensorStatus.QUANTIZED:
                continue
            if len(self.model.tensor_at(r).shape) >= 2:
                return r
        return None

    def set_quant(self, layout: QuantLayout | None) -> None:
        """A quantized checkpoint: one row per weight, its companions behind "Show scales"."""
        self.model.set_quant(layout)
        self._dtypes_changed()  # a weight's stored type: F8_E4M3
        self.show_scales.setVisible(self.model.has_companions)
        self.update_count()

    def set_config_note(self, mismatch: ConfigMismatch | None) -> None:
        """config.json's dtype against the weights (None: no config, or they agree)."""
        self.plots_tabs.hint.set_config_note(mismatch)

    def set_pickle(self, facts: PickleFacts | None) -> None:
        """A pickle's imports and plain values, in their own tab (None: not a pickle)."""
        self.plots_tabs.set_pickle(facts)

    def set_lint(self, findings: list[Finding] | None, folder: str = "") -> None:
        """lint's findings for a model folder (None: not a folder, or not linted yet)."""
        self.plots_tabs.set_lint(findings, folder)

    def set_plots(self, tabs: set[PlotTab]) -> None:
        """Show the plot tabs that have content, sized to it (the hint alone: its text height)."""
        self.plots_tabs.set_available(tabs)
        self._tabs = set(tabs)
        self._hint_only = tabs == {PlotTab.HINT}
        total = sum(self.left_split.sizes()) or self.left_split.height()
        if tabs - {PlotTab.HINT}:  # the table keeps at least half the height
            bottom = max(min(260, total // 2), int(total * 0.40))
            self.plots_tabs.setMaximumHeight(16_777_215)
        else:
            width = max(self.left_split.width() - 8, 300)
            hint_h = self.plots_tabs.hint.heightForWidth(width)
            if hint_h <= 0:
                hint_h = self.plots_tabs.hint.sizeHint().height()
            bottom = hint_h + self.plots_tabs.tabBar().sizeHint().height() + 8
            self.plots_tabs.setMaximumHeight(bottom)
        self.left_split.setSizes([max(total - bottom, 120), bottom])
        self.columns.fit_name_column()

    # ---- private --------------------------------------------------------------------------
    def _apply_only_differing(self, on: bool) -> None:
        self._set_filter(only_differing=on)

    def _set_filter(self, **change: Any) -> None:
        old = self.model.tensor_filter
        self.model.set_filter(
            TensorFilter(
                change.get("text", old.text),
                change.get("only_differing", old.only_differing),
                change.get("show_companions", old.show_companions),
            )
        )  # the model's layoutChanged runs _after_filter
        self._names_changed()

    def _names_changed(self) -> None:
        self.columns.set_names(self.model.widest_shown_names())

    def _dtypes_changed(self) -> None:
        """The DType column's texts change with the rows and the quantized weights, not with
        the filter: fitted on those alone."""
        self.columns.set_dtypes(self.model.dtype_texts())

    def _select_row(self, row: int) -> None:
        idx = self.model.index(row, 0)
        self.table.selectionModel().setCurrentIndex(
            idx,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.table.scrollTo(idx)

    def _on_current_row(self, current: Any, _previous: Any) -> None:
        if current.isValid():
            t: TensorInfo = self.model.tensor_at(current.row())
            self.sig_current_changed.emit(t)

    def _fit_tree(self) -> None:
        """The names keep most of a narrow window: the module tree takes at most 30 % of the
        room beside the table (190 px at most), unless the person dragged the splitter."""
        total = self.tree_split.width()
        if self._tree_placed_by_user or not self.module_tree.isVisibleTo(self) or total <= 0:
            return
        tree = min(190, int(total * 0.3))
        if self.tree_split.sizes()[0] != tree:
            self.tree_split.setSizes([tree, max(total - tree - self.tree_split.handleWidth(), 1)])

    def eventFilter(self, obj: Any, ev: Any) -> bool:
        if obj is self.table and ev.type() == ev.Type.Resize:
            QTimer.singleShot(0, self.columns.fit_name_column)
        elif obj is self.tree_split and ev.type() == ev.Type.Resize:
            self._fit_tree()
        elif obj is self.left_split and ev.type() == ev.Type.Resize and self._hint_only:
            QTimer.singleShot(0, lambda: self.set_plots(self._tabs))
        return super().eventFilter(obj, ev)
