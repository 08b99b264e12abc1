"""The tensor table: a QAbstractTableModel over ``TensorInfo`` rows (which rows show, in which
order, is :mod:`.row_order` and :mod:`.tensor_filter`; the cell wording :mod:`.table_text`).

Built for 200k rows: per-row values are derived on demand for the visible rows only; sorting
uses precomputed keys (one Python sort instead of millions of ``lessThan`` calls), and
filtering is one boolean per tensor. No proxy model: a ``QSortFilterProxyModel`` asks Python
``filterAcceptsRow`` for every row on each reset.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QBrush

from inspector.core.dtypes import DType
from inspector.core.layout import TensorInfo
from inspector.core.model_folder.intended import IntendedMatcher
from inspector.core.status import TensorStatus
from inspector.core.summary import QUANTIZED_GROUP, DTypeGroups

if TYPE_CHECKING:
    from inspector.core.quant.layout import QuantLayout

from .i18n import translate
from .quant_rows import QuantRows
from .row_order import RowOrder
from .row_sorter import RowSorter
from .table_text import (
    cast_error_tooltip,
    intended_tooltip,
    status_text,
    status_tooltip,
)
from .tensor_cells import cell_text, status_icon
from .tensor_columns import (
    TOOLTIPS,
    Col,
    ShownNameRole,
    StatusRole,
    header_text,
    highlight_colors,
)
from .tensor_filter import TensorFilter

Index = QModelIndex | QPersistentModelIndex


class TensorTableModel(QAbstractTableModel):
    """Tensors in file order; :meth:`sort` and the filter change which row shows which."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._tensors: list[TensorInfo] = []
        self._rows = RowOrder()  # display row -> tensor index
        self._filter = TensorFilter()
        self._pos: dict[str, int] | None = {}  # name -> tensor index (lazy)
        self._groups = DTypeGroups(())  # the tensors by dtype: one status per group
        self._target: DType | None = None
        self._status: list[str] = []
        self._intended: IntendedMatcher | None = None  # F32 tensors kept on purpose (norms…)
        self._intended_rows: dict[int, bool] = {}
        self._cast: dict[str, Any] = {}  # name -> TensorCastReport
        self._cast_active = False  # a report is shown (tensors missing from it were not cast)
        self._diff: dict[str, Any] = {}  # name -> TensorDiff
        self._quant: QuantRows | None = None  # a quantized checkpoint's weights and companions
        self._sorter = RowSorter()
        self._sort_column = -1
        self._sort_order = Qt.SortOrder.AscendingOrder
        self._bg, _ = highlight_colors()
        self._bg_brush = QBrush(self._bg)

    # -- API --------------------------------------------------------------------------------
    def set_rows(
        self,
        tensors: Sequence[TensorInfo],
        target: DType | None = None,
        groups: DTypeGroups | None = None,
    ) -> None:
        """Show ``tensors``. ``groups`` (the same tensors by dtype, e.g. built on a worker) saves
        a pass over them."""
        self.beginResetModel()
        self._tensors = list(tensors)
        self._pos = None  # name -> index, built on first lookup
        self._groups = groups if groups is not None else DTypeGroups(self._tensors)
        self._cast = {}
        self._cast_active = False
        self._diff = {}
        self._quant = None
        self._sorter.reset(self._tensors)
        if target is not None:
            self._target = target
        self._recompute_status()
        self._rows.set(  # file order when unsorted
            self._sorted_order(),
            self._filter.mask(self._tensors, self._status),
        )
        self.endResetModel()

    def set_quant(self, layout: QuantLayout | None) -> None:
        """A quantized checkpoint: codes rows show their weight, companions fold away."""
        self._quant = QuantRows(self._tensors, layout) if layout and layout.weights else None
        self._relayout(resort=False, refilter=True)
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, len(Col) - 1))

    def dtype_texts(self) -> set[str]:
        """Every text the DType column can show (the column is fitted to the widest): each
        dtype's name, and a quantized weight's stored type (``F8_E4M3``, ``Q4_K``)."""
        texts = {k for k in self._groups.groups if k != QUANTIZED_GROUP}
        if self._quant is not None:
            texts.update(w.stored_dtype for w in self._quant.weights.values())
            texts.update(self._tensors[i].dtype.name for i in self._quant.companions)
        return texts

    @property
    def _refusal(self) -> str | None:
        return self._quant.refusal if self._quant is not None else None

    @property
    def has_companions(self) -> bool:
        return self._quant is not None and bool(self._quant.companions)

    def _mask(self) -> list[bool] | None:
        companions = self._quant.companions if self._quant is not None else frozenset()
        return self._filter.mask(self._tensors, self._status, companions)

    def set_intended(self, matcher: IntendedMatcher | None) -> None:
        """Which F32 tensors a model keeps in F32 on purpose; asked per shown row, cached."""
        self._intended, self._intended_rows = matcher, {}
        self._changed_column(Col.STATUS, resort=False)  # its text changes, not its order

    def is_intended(self, i: int) -> bool:
        """Tensor ``i`` differs from the target but is an F32 norm, inv_freq or router."""
        if self._intended is None or self._status[i] is not TensorStatus.DIFFERS:
            return False
        found = self._intended_rows.get(i)
        if found is None:
            found = self._intended_rows[i] = self._intended(self._tensors[i])
        return found

    def set_target(self, target: DType) -> None:
        if self._target is not None and target.name == self._target.name:
            return
        self._target = target
        self._recompute_status()
        if self._tensors:
            if self._sort_column == Col.STATUS or self._filter.only_differing:
                self._relayout(self._sort_column == Col.STATUS, self._filter.only_differing)
            if self.rowCount():
                self.dataChanged.emit(
                    self.index(0, 0), self.index(self.rowCount() - 1, len(Col) - 1)
                )

    def set_filter(self, tensor_filter: TensorFilter) -> None:
        """Show only the tensors ``tensor_filter`` lets through (kept across :meth:`set_rows`)."""
        if tensor_filter != self._filter:
            module = tensor_filter.module_prefix() != self._filter.module_prefix()
            self._filter = tensor_filter
            self._relayout(resort=False, refilter=True)
            if module:
                self.headerDataChanged.emit(Qt.Orientation.Horizontal, Col.NAME, Col.NAME)

    def shown_name(self, name: str) -> str:
        """``name`` relative to the module the filter shows (``mlp.down_proj.weight`` within
        ``model.layers.1``), else whole."""
        prefix = self._filter.module_prefix()
        if prefix and len(name) > len(prefix) and name[: len(prefix)].lower() == prefix.lower():
            return name[len(prefix) :]
        return name

    def widest_shown_names(self, k: int = 48) -> list[str]:
        """Up to ``k`` of the longest names the Name column shows (the widest in pixels is
        among them): what the column's width is fitted to, without measuring 200k names."""
        tensors = self._tensors
        longest = heapq.nlargest(k, (tensors[i].name for i in self._rows.rows), key=len)
        return [self.shown_name(n) for n in longest]  # a prefix shortens every name alike

    @property
    def tensor_filter(self) -> TensorFilter:
        return self._filter

    def set_cast_report(self, tensors: Sequence[Any] | None) -> None:
        """Per-tensor cast results (``TensorCastReport``), or None to clear the column."""
        self._cast = {r.name: r for r in tensors or ()}
        self._cast_active = tensors is not None
        self._changed_column(Col.CAST_ERR)

    def set_diff(self, diffs: Sequence[Any] | None) -> None:
        """Per-tensor ``TensorDiff`` against a reference, or None to clear the column."""
        self._diff = {d.name: d for d in diffs or ()}
        self._changed_column(Col.REF_DIFF)

    @property
    def target(self) -> DType | None:
        return self._target

    @property
    def tensors(self) -> list[TensorInfo]:
        return self._tensors

    def tensor_at(self, row: int) -> TensorInfo:
        return self._tensors[self._rows.rows[row]]

    def tensor_index(self, row: int) -> int:
        """Index into :attr:`tensors` (file order) of display row ``row``."""
        return self._rows.rows[row]

    def has_tensor(self, name: str) -> bool:
        return self._index_of(name) is not None

    def row_of(self, name: str) -> int:
        """The row showing ``name``; -1 if there is no such tensor or the filter hides it."""
        i = self._index_of(name)
        return -1 if i is None else self._rows.row_of(i)

    def _index_of(self, name: str) -> int | None:
        if self._pos is None:
            self._pos = {t.name: i for i, t in enumerate(self._tensors)}
        return self._pos.get(name)

    def statuses(self) -> list[str]:
        return self._status

    # -- internals --------------------------------------------------------------------------
    def _recompute_status(self) -> None:
        tgt = self._target
        if tgt is None:
            self._status = [TensorStatus.MATCH] * len(self._tensors)
            return
        # one core call per distinct dtype, not per tensor
        by_dtype = {n: self._groups.group_status(n, tgt) for n in self._groups.groups}
        self._status = list(map(by_dtype.__getitem__, self._groups.dtype_names))

    def _changed_column(self, col: int, resort: bool = True) -> None:
        if resort:
            self._sorter.forget(col)
        if self._tensors:
            if resort and self._sort_column == col:
                self._relayout(resort=True, refilter=False)
            if self.rowCount():
                self.dataChanged.emit(self.index(0, col), self.index(self.rowCount() - 1, col))

    # -- Qt model ---------------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(Col)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(Col):
            if role == Qt.ItemDataRole.DisplayRole:
                prefix = self._filter.module_prefix()
                if section == Col.NAME and prefix:
                    return translate("TensorTable", "Name in {module}").format(
                        module=prefix.rstrip(".")
                    )
                return header_text(Col(section))
            if role == Qt.ItemDataRole.ToolTipRole:
                tip = TOOLTIPS.get(Col(section))
                return translate("TensorTable", tip) if tip else None
        if orientation == Qt.Orientation.Vertical and role == Qt.ItemDataRole.DisplayRole:
            return section + 1
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemNeverHasChildren
        )

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        rows = self._rows.rows
        if not (0 <= row < len(rows)) or not (0 <= col < len(Col)):
            return None
        i = rows[row]
        t = self._tensors[i]
        status = self._status[i]
        R = Qt.ItemDataRole
        intended = status is TensorStatus.DIFFERS and self.is_intended(i)
        if role == R.DisplayRole:
            if intended and col == Col.STATUS:
                return translate("TensorTable", "on purpose?")  # the DType column says F32
            if self._quant is not None and i in self._quant.weights:
                logical = self._quant.cell(i, col)
                if logical is not None:
                    return logical
            return cell_text(
                t, status, col, self._target, self._cast if self._cast_active else None, self._diff
            )
        if role == R.BackgroundRole:
            return self._bg_brush if status is TensorStatus.DIFFERS and not intended else None
        if role == R.DecorationRole:
            if col != Col.STATUS:
                return None
            return status_icon("intended" if intended else status)
        if role == R.ToolTipRole:
            if col == Col.CAST_ERR and self._cast_active:
                return cast_error_tooltip(self._cast.get(t.name))
            if col == Col.STATUS:
                tgt = self._target.name if self._target else "?"
                if intended:
                    return intended_tooltip(tgt)
                return status_tooltip(t, status, tgt, self._refusal)
            if col == Col.NAME:
                logical = self._quant.tooltip(i) if self._quant is not None else None
                return logical or t.name
            return None
        if role == R.TextAlignmentRole:
            if col in (Col.PARAMS, Col.SIZE, Col.CAST_ERR, Col.REF_DIFF):
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return None
        if role == R.FontRole:
            return None
        if role == StatusRole:
            return status
        if role == ShownNameRole and col == Col.NAME:
            return self.shown_name(str(self.data(index)))
        if role == R.AccessibleTextRole and col == Col.STATUS:
            return status_text(status, t, self._target, self._refusal) if self._target else status
        return None

    def _sorted_order(self) -> list[int]:
        descending = self._sort_order == Qt.SortOrder.DescendingOrder
        return self._sorter.order(
            self._sort_column, descending, self._status, self._cast, self._diff
        )

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._sort_column, self._sort_order = column, order
        if self._tensors:
            self._relayout(resort=True, refilter=False)

    def _relayout(self, resort: bool, refilter: bool) -> None:
        """Re-sort and/or re-filter as one layout change; the current row and the selection
        follow their tensors (or become invalid when the filter hides them)."""
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        rows = self._rows.rows
        old_ids = [(rows[p.row()], p.column()) for p in old]
        self._rows.set(
            self._sorted_order() if resort else self._rows.order,
            self._mask() if refilter else self._rows.mask,
        )
        if old:
            where = {ti: r for r, ti in enumerate(self._rows.rows)} if len(old) > 8 else None
            new = []
            for ti, c in old_ids:
                r = where.get(ti, -1) if where is not None else self._rows.row_of(ti)
                new.append(self.index(r, c) if r >= 0 else QModelIndex())
            self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()
