"""Tensors grouped by module prefix (``encoder`` ▸ ``layer`` ▸ ``0`` ▸ ``attention`` …).

Children are computed when a node is first expanded, from the parent's own tensor indices, so
a 200k-tensor checkpoint costs one pass for the top level and small passes after that. Clicking a
module filters the table to it.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QFont
from PySide6.QtWidgets import (
    QApplication,
    QHeaderView,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from inspector.core.status import TensorStatus

from .i18n import translate
from .tensor_columns import highlight_colors

PREFIX = Qt.ItemDataRole.UserRole + 1
_PLACEHOLDER = "…"


def group_children(
    names: Sequence[str], statuses: Sequence[str], indices: Sequence[int], depth: int
) -> dict[str, tuple[list[int], int, bool]]:
    """Next name component at ``depth`` → (tensor indices, number differing, has sub-modules)."""
    out: dict[str, tuple[list[int], int, bool]] = {}
    for i in indices:
        parts = names[i].split(".", depth + 2)
        if len(parts) <= depth + 1:
            continue  # a tensor directly in this module: shown in the table, not the tree
        key = parts[depth]
        entry = out.get(key)
        if entry is None:
            entry = out[key] = ([], 0, False)
        idx, differ, deeper = entry
        idx.append(i)
        out[key] = (
            idx,
            differ + (statuses[i] is TensorStatus.DIFFERS),
            deeper or len(parts) > depth + 2,
        )
    return out


class ModuleTree(QTreeWidget):
    prefix_selected = Signal(str)  # "encoder.layer.1." ("" for everything)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # short headers: the module names get the room in a narrow panel (tooltips explain)
        self.setHeaderLabels([translate("ModuleTree", "Module"), "#", "≠"])
        self.headerItem().setToolTip(1, translate("ModuleTree", "Tensors under this module"))
        self.headerItem().setToolTip(
            2, translate("ModuleTree", "Tensors whose dtype differs from the model dtype")
        )
        self.setUniformRowHeights(True)
        hh = self.header()
        hh.setStretchLastSection(False)
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.setAcceptDrops(False)
        self.viewport().setAcceptDrops(False)
        self.setAccessibleName(translate("ModuleTree", "Modules"))
        self.itemExpanded.connect(self._expand)
        self.itemClicked.connect(self._clicked)
        self._names: Sequence[str] = ()
        self._statuses: Sequence[str] = ()
        self._indices: dict[str, list[int]] = {}  # prefix -> its tensors, until expanded
        self._bg = QBrush(highlight_colors()[0])
        style = QApplication.style()
        self._warn = (
            style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning) if style else None
        )

    def set_tensors(self, names: Sequence[str], statuses: Sequence[str]) -> None:
        self._names, self._statuses = names, statuses
        self._indices = {}
        self.clear()
        root = QTreeWidgetItem(
            self, [translate("ModuleTree", "(all tensors)"), f"{len(names):,}", self._n(statuses)]
        )
        root.setData(0, PREFIX, "")
        self._fill(root, range(len(names)), 0)
        root.setTextAlignment(1, Qt.AlignmentFlag.AlignRight)
        root.setTextAlignment(2, Qt.AlignmentFlag.AlignRight)
        root.setExpanded(True)

    @staticmethod
    def _n(statuses: Sequence[str]) -> str:
        n = sum(1 for s in statuses if s is TensorStatus.DIFFERS)
        return f"{n:,}" if n else ""

    def _fill(self, parent: QTreeWidgetItem, indices: Sequence[int], depth: int) -> None:
        prefix = parent.data(0, PREFIX) or ""
        groups = group_children(self._names, self._statuses, indices, depth)
        for key, (idx, differ, deeper) in groups.items():
            item = QTreeWidgetItem(parent, [key, f"{len(idx):,}", f"{differ:,}" if differ else ""])
            item.setData(0, PREFIX, f"{prefix}{key}.")
            if deeper:
                self._indices[f"{prefix}{key}."] = idx
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight)
            item.setTextAlignment(2, Qt.AlignmentFlag.AlignRight)
            item.setToolTip(0, f"{prefix}{key}.* — click to show only these tensors")
            if differ:
                # colour and an icon: differing modules are findable without colour vision
                for c in range(3):
                    item.setBackground(c, self._bg)
                if self._warn is not None:
                    item.setIcon(0, self._warn)
                f = QFont(item.font(0))
                f.setBold(True)
                item.setFont(2, f)
            if deeper:
                QTreeWidgetItem(item, [_PLACEHOLDER])

    def _expand(self, item: QTreeWidgetItem) -> None:
        if item.childCount() == 1 and item.child(0).text(0) == _PLACEHOLDER:
            item.takeChild(0)
            prefix = item.data(0, PREFIX) or ""
            self._fill(item, self._indices.pop(prefix, []), prefix.count("."))

    def _clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        self.prefix_selected.emit(item.data(0, PREFIX) or "")

    def find_prefix(self, prefix: str) -> QTreeWidgetItem | None:
        """The node for ``prefix`` (expanding its parents), or None."""
        item = self.topLevelItem(0)
        if item is None:
            return None
        if not prefix:
            return item
        path = prefix.rstrip(".").split(".")
        for part in path:
            item.setExpanded(True)
            for i in range(item.childCount()):
                if item.child(i).text(0) == part:
                    item = item.child(i)
                    break
            else:
                return None
        return item
