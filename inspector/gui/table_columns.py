"""Which columns of the tensor table show, and how wide: a column shows when it has data (the
cast and compare columns) and the person did not hide it (header menu, remembered).

Names win the width. The name column gets what its widest shown name needs; the other columns
keep their natural width (their sample's, or what the person dragged) while that leaves room,
then shrink towards a floor, and when even their floors leave the names less than a minimum,
the columns other cells repeat are left out for lack of room (Params, Size, Shape, then DType:
the status reads "F32 → F16"), so every shown header fits the viewport. The name column then
takes the room the others leave."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QMenu, QTableView

from .i18n import translate
from .tensor_columns import Col, header_text

DEFAULT_HIDDEN = (Col.PARAMS,)  # Shape and Size say it; the names get the room

_COLUMN_SAMPLES = {
    Col.DTYPE: "BF16W",
    Col.SHAPE: "[1000, 64]",
    Col.PARAMS: "12,345,678",
    Col.SIZE: "1023.9 KiB",
    Col.STATUS: "WW F8_E4M3 → BF16",
    Col.CAST_ERR: "12 underflow",
    Col.REF_DIFF: "0 (equal)W",
}
_COLUMN_FLOORS = {  # the narrowest a column gets before it is left out
    Col.DTYPE: "BF16",
    Col.SHAPE: "[250, 40…",
    Col.PARAMS: "12,345…",
    Col.SIZE: "390.6 KiB",
    Col.STATUS: "F32 → F16",
    Col.CAST_ERR: "2 underflow",  # wider than any 3 significant digits: never "…00574"
    Col.REF_DIFF: "0.000574",
}
_LEFT_OUT_FIRST = (Col.PARAMS, Col.SIZE, Col.SHAPE, Col.DTYPE)  # for lack of room, in this order
_NAME_PADDING = 16  # the delegate's margins, and a little air


class TableColumns(QObject):
    sig_hidden_changed = Signal(list)  # names of the columns the person hid

    def __init__(self, table: QTableView, fm: QFontMetrics) -> None:
        super().__init__(table)
        self.table, self.fm = table, fm
        self._has_data = {Col.CAST_ERR: False, Col.REF_DIFF: False}
        self._user_hidden: set[Col] = set(DEFAULT_HIDDEN)
        self._no_room: set[Col] = set()  # left out this time for lack of room
        self._dragged: set[Col] = set()  # widths the person chose: no sample changes them
        self.natural = {c: fm.horizontalAdvance(t) + 24 for c, t in _COLUMN_SAMPLES.items()}
        self.floor = {c: fm.horizontalAdvance(t) + 12 for c, t in _COLUMN_FLOORS.items()}
        self.floor[Col.STATUS] += 20  # its icon
        self.min_name = fm.horizontalAdvance("…00.self_attn.q_proj.w")
        self.name_want = self.min_name  # what the widest shown name needs
        self._fitting = False
        hh = table.horizontalHeader()
        for col, width in self.natural.items():
            table.setColumnWidth(col, width)
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
        """Whether ``col`` has data and the person wants it (it may still be left out for lack
        of room: :meth:`left_out`)."""
        return self._has_data.get(col, True) and col not in self._user_hidden

    def left_out(self) -> set[Col]:
        """The columns shown() but left out for lack of room at the current width."""
        return set(self._no_room)

    def set_names(self, names: list[str]) -> None:
        """The (longest) names the name column shows: it is fitted to the widest of them."""
        widest = max((self.fm.horizontalAdvance(n) for n in names), default=0)
        # the header's title too ("Name in model.layers.1"), margins included, as Qt sizes it
        header = self.table.horizontalHeader().sectionSizeFromContents(Col.NAME).width()
        widest = max(widest, header - _NAME_PADDING)
        self.name_want = max(widest + _NAME_PADDING, self.min_name)
        self.fit_name_column()

    def set_dtypes(self, texts: set[str]) -> None:
        """The DType column's texts: its natural width grows to the widest (``F8_E4M3``,
        ``Q4_K``) unless the person dragged it, so no dtype shows as ``…E4M3``."""
        if Col.DTYPE in self._dragged:
            return
        widest = max((self.fm.horizontalAdvance(t) for t in texts), default=0)
        natural = max(self.fm.horizontalAdvance(_COLUMN_SAMPLES[Col.DTYPE]), widest) + 24
        # a dtype cut to "…E4M3" says nothing: below its width the column is left out instead
        floor = max(self.fm.horizontalAdvance(_COLUMN_FLOORS[Col.DTYPE]), widest) + 12
        if (natural, floor) != (self.natural[Col.DTYPE], self.floor[Col.DTYPE]):
            self.natural[Col.DTYPE], self.floor[Col.DTYPE] = natural, floor
            self.fit_name_column()

    def _apply(self) -> None:
        self.fit_name_column()

    def _menu(self, pos: Any) -> None:
        menu = QMenu(self.table)
        for col in Col:
            if col is Col.NAME:
                continue
            text = header_text(col)
            if col in self._no_room:  # ticked (the person did not hide it), but not drawn now
                text = translate("TableColumns", "{column} (no room at this width)").format(
                    column=text
                )
            a = menu.addAction(text)
            a.setCheckable(True)
            a.setChecked(col not in self._user_hidden)
            a.toggled.connect(lambda on, c=col: self.toggle(c, on))
        menu.popup(self.table.horizontalHeader().mapToGlobal(pos))
        self.menu = menu

    def _section_resized(self, index: int, _old: int, new: int) -> None:
        # a hidden section reads 0 (Qt hides by resizing): not a width anyone chose
        if index != Col.NAME and not self._fitting and new > 0:
            self.natural[Col(index)] = new  # the person dragged it: that is its width now
            self._dragged.add(Col(index))
            self.fit_name_column()

    def fit_name_column(self) -> None:
        """Lay the columns out for the viewport's width (the module's docstring says how)."""
        avail = self.table.viewport().width()
        wanted = [c for c in Col if c is not Col.NAME and self.shown(c)]
        no_room: set[Col] = set()
        for col in _LEFT_OUT_FIRST:
            if sum(self.floor[c] for c in wanted if c not in no_room) + self.min_name <= avail:
                break
            if col in wanted:
                no_room.add(col)
        others = [c for c in wanted if c not in no_room]
        widths = {c: self.natural[c] for c in others}
        short = self.name_want + sum(widths.values()) - avail
        if short > 0:  # shrink the others towards their floors, each by its share of the slack
            slack = {c: max(widths[c] - self.floor[c], 0) for c in others}
            total = sum(slack.values())
            if total:
                take = min(short, total)
                for c in others:  # rounded up: the name gets the odd pixels, not short of them
                    widths[c] -= min(-(-take * slack[c] // total), slack[c])
        name = max(avail - sum(widths.values()), self.min_name)
        self._fitting = True
        try:
            for col in Col:
                hidden = col is not Col.NAME and col not in widths
                if self.table.isColumnHidden(col) != hidden:
                    self.table.setColumnHidden(col, hidden)
            # not with the header's signals blocked: the view lays out and repaints its rows on
            # sectionResized (blocked, rows kept the old column layout until a click)
            for col, width in [*widths.items(), (Col.NAME, name)]:
                if self.table.columnWidth(col) != width:
                    self.table.setColumnWidth(col, width)
        finally:
            self._fitting = False
        self._no_room = no_room
