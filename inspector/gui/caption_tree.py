"""A tab of text over a tree: the base of the Pickle and Lint tabs."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QTreeWidget, QVBoxLayout, QWidget


class CaptionTree(QWidget):
    """``caption`` (rich text, wrapped) above ``tree`` (two columns with the given headers)."""

    def __init__(self, headers: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(len(headers))
        self.tree.setHeaderLabels(headers)
        layout.addWidget(self.caption)
        layout.addWidget(self.tree, 1)
