"""The "Pickle" tab: what a PyTorch pickle imports (each with its verdict) and the values it holds
that are not tensors. Read by our interpreter; nothing in the file was executed to show this."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QTreeWidgetItem, QWidget

from .caption_tree import CaptionTree
from .i18n import translate

if TYPE_CHECKING:
    from inspector.core.formats.torch_pickle import PickleFacts


def _verdict_text(verdict: str) -> str:
    return {
        "tensor": translate("PicklePanel", "torch tensor machinery"),
        "container": translate("PicklePanel", "plain container"),
        "unsupported": translate("PicklePanel", "tensor kind not readable here"),
        "refused": translate("PicklePanel", "refused"),
    }.get(verdict, verdict)


class PicklePanel(CaptionTree):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(
            [translate("PicklePanel", "name"), translate("PicklePanel", "what it is")], parent
        )
        self.tree.setUniformRowHeights(True)

    def set_facts(self, facts: PickleFacts | None) -> None:
        """Show one pickle's imports and values (``None`` clears the tab)."""
        self.tree.clear()
        if facts is None:
            self.caption.setText("")
            return
        self.caption.setText(
            translate(
                "PicklePanel",
                "<b>PyTorch pickle ({format})</b>, read opcode by opcode: nothing in it was "
                "executed. It imports only torch's tensor machinery and plain containers.",
            ).format(format=facts.format.value)
        )
        imports = QTreeWidgetItem(
            [translate("PicklePanel", "Pickle imports ({n})").format(n=len(facts.imports)), ""]
        )
        for seen in facts.imports:
            text = _verdict_text(seen.verdict.value)
            if seen.count > 1:
                text += f" ×{seen.count}"
            imports.addChild(QTreeWidgetItem([seen.name, text]))
        self.tree.addTopLevelItem(imports)
        if facts.values:
            values = QTreeWidgetItem(
                [
                    translate(
                        "PicklePanel", "Values that are not tensors ({n}), not written by cast"
                    ).format(n=len(facts.values)),
                    "",
                ]
            )
            for v in facts.values[:5000]:
                values.addChild(QTreeWidgetItem([v.name, v.text]))
            self.tree.addTopLevelItem(values)
        self.tree.expandAll()
        self.tree.resizeColumnToContents(0)
