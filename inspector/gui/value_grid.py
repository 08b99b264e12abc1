"""The Values tab: a window of the selected tensor's values in a table, moved by spin boxes.

The view asks for a window (``sig_window_changed``) and shows what it is given; reading it is
the values controller's job, off the GUI thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from .i18n import translate

if TYPE_CHECKING:
    from inspector.core.value_views import Plane, ValueSlice

WINDOW = 64  # rows and columns of values read at a time
SPIN_MAX = 2**31 - 1  # a spin box holds an int32: a longer dimension is shown up to there

_Index = QModelIndex | QPersistentModelIndex


def format_value(v: Any) -> str:
    """A value as it is: floats with every digit that tells it apart (repr), ints whole."""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if f != f:
            return "NaN"
        if f in (float("inf"), float("-inf")):
            return "inf" if f > 0 else "−inf"
        return f"{f:.7g}"
    return str(v)


class ValueGridModel(QAbstractTableModel):
    """A read-only table over one ValueSlice; headers are the tensor's row and column numbers."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.slice: ValueSlice | None = None

    def set_slice(self, s: ValueSlice | None) -> None:
        self.beginResetModel()
        self.slice = s
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if self.slice is None or parent.isValid() else self.slice.values.shape[0]

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if self.slice is None or parent.isValid() else self.slice.values.shape[1]

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        s = self.slice
        if s is None or not index.isValid():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return format_value(s.values[index.row(), index.column()])
        if role == Qt.ItemDataRole.ToolTipRole:
            v = s.values[index.row(), index.column()]
            where = ", ".join(
                str(i) for i in (*s.index, s.row0 + index.row(), s.col0 + index.column())
            )
            exact = repr(float(v)) if isinstance(v, np.floating) else format_value(v)
            return f"[{where}] = {exact}"
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        s = self.slice
        if s is None or role != Qt.ItemDataRole.DisplayRole:
            return None
        base = s.row0 if orientation == Qt.Orientation.Vertical else s.col0
        return str(base + section)


def _last(n: int) -> int:
    return max(0, min(n - 1, SPIN_MAX))


class ValuesView(QWidget):
    """Spin boxes for the plane (leading indices), the first row and column; the table."""

    sig_window_changed = Signal(tuple, int, int)  # leading indices, first row, first column

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 2, 0, 0)
        self.controls = QHBoxLayout()
        self.controls.setContentsMargins(0, 0, 0, 0)
        self.lead_box = QHBoxLayout()  # one spin box per leading dimension
        self.lead_box.setContentsMargins(0, 0, 0, 0)
        self.controls.addLayout(self.lead_box)
        self.row_spin = self._spin(translate("ValuesView", "First row shown"))
        self.col_spin = self._spin(translate("ValuesView", "First column shown"))
        self.row_label = QLabel(translate("ValuesView", "row"))
        self.col_label = QLabel(translate("ValuesView", "col"))
        for w in (self.row_label, self.row_spin, self.col_label, self.col_spin):
            self.controls.addWidget(w)
        self.controls.addStretch(1)
        lay.addLayout(self.controls)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        lay.addWidget(self.caption)
        self.model = ValueGridModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 4)
        self.table.verticalHeader().setMinimumSectionSize(self.table.fontMetrics().height() + 2)
        lay.addWidget(self.table, 1)
        self.lead_spins: list[QSpinBox] = []
        self._silent = False
        self.set_plane(None)

    def _spin(self, tip: str) -> QSpinBox:
        s = QSpinBox()
        s.setToolTip(tip)
        s.setAccessibleName(tip)
        s.setSingleStep(WINDOW // 2)
        s.setKeyboardTracking(False)  # typed numbers ask once, at Enter
        s.valueChanged.connect(self._emit)
        return s

    # ---- public API -----------------------------------------------------------------------
    def set_plane(self, plane: Plane | None) -> None:
        """A new tensor: spin boxes for its shape, all at 0 (no signal)."""
        self._silent = True
        try:
            for s in self.lead_spins:
                self.lead_box.removeWidget(s)
                s.deleteLater()
            self.lead_spins = []
            if plane is not None:
                for n in plane.lead:
                    s = QSpinBox()
                    s.setRange(0, _last(n))
                    s.setPrefix("[")
                    s.setSuffix("]")
                    s.setToolTip(translate("ValuesView", "Index along a leading dimension"))
                    s.setKeyboardTracking(False)
                    s.valueChanged.connect(self._emit)
                    self.lead_box.addWidget(s)
                    self.lead_spins.append(s)
            rows = plane.rows if plane is not None else 1
            cols = plane.cols if plane is not None else 1
            self.row_spin.setRange(0, _last(rows))
            self.col_spin.setRange(0, _last(cols))
            self.row_spin.setValue(0)
            self.col_spin.setValue(0)
            one_col = plane is None or cols <= 1
            self.col_spin.setVisible(not one_col)
            self.col_label.setVisible(not one_col)
        finally:
            self._silent = False
        self.model.set_slice(None)
        self.caption.setText("" if plane is None else translate("ValuesView", "reading…"))

    def window(self) -> tuple[tuple[int, ...], int, int]:
        return (
            tuple(s.value() for s in self.lead_spins),
            self.row_spin.value(),
            self.col_spin.value(),
        )

    def set_window(self, index: tuple[int, ...], row0: int, col0: int) -> None:
        """Move the window (as a person would: the view asks for it)."""
        self._silent = True
        try:
            for s, i in zip(self.lead_spins, index, strict=False):
                s.setValue(i)
            self.row_spin.setValue(row0)
        finally:
            self._silent = False
        self.col_spin.setValue(col0)
        self._emit()

    def set_slice(self, s: ValueSlice) -> None:
        self.model.set_slice(s)
        self.table.resizeColumnsToContents()  # 64 columns: every digit shown, none cut
        n_rows, n_cols = s.values.shape
        where = translate("ValuesView", "rows {r0}–{r1} of {rows}, columns {c0}–{c1} of {cols}")
        text = where.format(
            r0=f"{s.row0:,}",
            r1=f"{s.row0 + n_rows - 1:,}",
            rows=f"{s.plane.rows:,}",
            c0=f"{s.col0:,}",
            c1=f"{s.col0 + n_cols - 1:,}",
            cols=f"{s.plane.cols:,}",
        )
        if s.dequantized:
            text += translate("ValuesView", " · dequantized values")
        self.caption.setText(text)

    def set_message(self, text: str) -> None:
        self.model.set_slice(None)
        self.caption.setText(text)

    def _emit(self, *_: object) -> None:
        if not self._silent:
            self.sig_window_changed.emit(*self.window())
