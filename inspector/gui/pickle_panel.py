"""The "Pickle" tab: what a PyTorch pickle imports (each with its verdict) and the values it holds
that are not tensors. Read by our interpreter; nothing in the file was executed to show this, not
even the unknown objects it names (kept as inert placeholders)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QTreeWidgetItem, QWidget

from inspector.core.unknown_objects import unknown_imports, unread_tensors
from inspector.core.wording import _clip

from .caption_tree import CaptionTree
from .i18n import translate

if TYPE_CHECKING:
    from inspector.core.checkpoint import Checkpoint
    from inspector.core.formats.torch_pickle import PickleFacts


def _verdict_text(verdict: str) -> str:
    return {
        "tensor": translate("PicklePanel", "torch tensor machinery"),
        "container": translate("PicklePanel", "plain container"),
        "unsupported": translate("PicklePanel", "tensor kind not readable here"),
        "refused": translate("PicklePanel", "unknown, not executed"),
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
        if facts.unknown:
            caption = translate(
                "PicklePanel",
                "<b>PyTorch pickle ({format})</b>, read opcode by opcode: nothing in it was "
                "executed. It imports {n} unknown objects, kept as inert placeholders: "
                "torch.load(weights_only=True) refuses this file.",
            ).format(format=facts.format.value, n=len(facts.unknown))
        else:
            caption = translate(
                "PicklePanel",
                "<b>PyTorch pickle ({format})</b>, read opcode by opcode: nothing in it was "
                "executed. It imports only torch's tensor machinery and plain containers.",
            ).format(format=facts.format.value)
        self.caption.setText(caption)
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


def unknown_objects_text(ckpt: Checkpoint) -> str:
    """The window's word on unknown objects (" " and a sentence or two), or "" when none."""
    names = unknown_imports(ckpt)
    if not names:
        return ""
    shown = ", ".join(_clip(n, 120) for n in names[:5])
    shown += f" (+{len(names) - 5})" if len(names) > 5 else ""
    text = translate(
        "PicklePanel",
        "Unknown objects not executed: {names}; kept as inert placeholders (see the Pickle "
        "tab). torch.load(weights_only=True) refuses this file.",
    ).format(names=shown)
    unread = unread_tensors(ckpt)
    if unread:
        text += " " + (
            translate("PicklePanel", "1 tensor whose rebuild needs them was not read.")
            if len(unread) == 1
            else translate("PicklePanel", "{n} tensors whose rebuild needs them were not read.")
        ).format(n=f"{len(unread):,}")
    return " " + text
