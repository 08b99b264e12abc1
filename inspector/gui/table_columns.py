"""Which columns of the tensor table show, and how wide: a column shows when it has data (the
cast and compare columns) and the person did not hide it (header menu, remembered); the name
column takes the room the others leave."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QMenu, QTableView

from .tensor_columns import Col, header_text

DEFAULT_HIDDEN = (Col.PARAMS,)  # Shape and Size say it; the names get the room

_COLUMN_SAMPLES = {
    Col.DTYPE: "BF16W",
    Col.SHAPE: "[1000, 64]",
    Col.PARAMS: "12,345,678",
    Col.SIZE: "1023.9 KiB",
    Col.STATUS: "WW F8_E4M3 → BF16",
    Col.CAST_ERR: "0 (lossless)",
    Col.REF_DIFF: "0 (equal)W",
}


class TableColumns(QObject):
    sig_hidden_changed = Signal(list)  # names of the columns the person hid

    def __init__(self, table: QTableView, fm: QFontMetrics) -> None:
        super().__init__(table)
        self.table, self.fm = table, fm
        self._has_data = {Col.CAST_ERR: False, Col.REF_DIFF: False}
        self._user_hidden: set[Col] = set(DEFAULT_HIDDEN)
        hh = table.horizontalHeader()
        for col, sample in _COLUMN_SAMPLES.items():
            table.setColumnWidth(col, fm.horizontalAdvance(sample) + 24)
        hh.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        hh.customContextMenuRequested.connect(self._menu)
        hh.sectionResized.connect(self._section_resized)
        self.menu: QMenu | None = None
        self._apply()

    def set_has_data(self, col: Col, has: bool) -> None:
        self._has_data[col] = has
        self._apply()

    def set_hidden(self, names: list[str]) -> None:
        """The columns the person chose to hide (by name; unknown names are ignored)."""
        self._user_hidden = {Col[n] for n in names if n in Col.__members__ and n != "NAME"}
        self._apply()

    def toggle(self, col: Col, shown: bool) -> None:
        (self._user_hidden.discard if shown else self._user_hidden.add)(col)
        self._apply()
        self.sig_hidden_changed.emit(sorted(c.name for c in self._user_hidden))

    def shown(self, col: Col) -> bool:
        return self._has_data.get(col, True) and col not in self._user_hidden

    def _apply(self) -> None:
        for col in Col:
            self.table.setColumnHidden(col, not self.shown(col))
        self.fit_name_column()

    def _menu(self, pos: Any) -> None:
        menu = QMenu(self.table)
        for col in Col:
            if col is Col.NAME:
                continue
            a = menu.addAction(header_text(col))
            a.setCheckable(True)
            a.setChecked(col not in self._user_hidden)
            a.toggled.connect(lambda on, c=col: self.toggle(c, on))
        menu.popup(self.table.horizontalHeader().mapToGlobal(pos))
        self.menu = menu

    def _section_resized(self, index: int, _old: int, _new: int) -> None:
        if index != Col.NAME:
            self.fit_name_column()

    def fit_name_column(self) -> None:
        """The name column takes the room the other columns leave (never less than a minimum)."""
        hh = self.table.horizontalHeader()
        others = sum(
            self.table.columnWidth(c)
            for c in range(1, len(Col))
            if not self.table.isColumnHidden(c)
        )
        avail = self.table.viewport().width() - others
        width = max(avail, self.fm.horizontalAdvance("…00.self_attn.q_proj.w"))
        if hh.sectionSize(Col.NAME) != width:
            # not with the header's signals blocked: the view lays out and repaints its rows on
            # sectionResized (blocked, rows kept the old column layout until a click); our own
            # handler ignores the name column, so this does not recurse
            self.table.setColumnWidth(Col.NAME, width)
