"""Paints the Name column with :func:`~.name_elision.compact_name`: a name that does not fit is
compacted so rows stay tell-apart-able (the full name is the cell's tooltip). Within a module the
filter shows, names are painted relative to it (the model's ``ShownNameRole``)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from .name_elision import compact_name
from .tensor_columns import ShownNameRole

_PADDING = 10  # the style's text margins on both sides, with room to spare


class NameDelegate(QStyledItemDelegate):
    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        shown = index.data(ShownNameRole)
        opt.text = self.display_text(shown or opt.text, opt.rect.width(), opt)
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if style is None:
            super().paint(painter, option, index)
            return
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)

    @staticmethod
    def display_text(name: str, width: int, opt: QStyleOptionViewItem) -> str:
        fm = opt.fontMetrics
        return compact_name(name, width - _PADDING, fm.horizontalAdvance)
