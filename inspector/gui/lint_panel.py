"""The "Lint" tab: what ``checkpoint-inspector lint`` finds in a model folder, one row a finding,
with the tensors and files it concerns underneath."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QTreeWidgetItem, QWidget

from .caption_tree import CaptionTree
from .i18n import translate
from .lint_texts import finding_text, severity_text

if TYPE_CHECKING:
    from inspector.core.model_folder.findings import Finding


class LintPanel(CaptionTree):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(
            [translate("LintPanel", "severity"), translate("LintPanel", "finding")], parent
        )

    def set_findings(self, findings: list[Finding] | None, folder: str = "") -> None:
        """Show lint's findings for ``folder`` (None clears the tab)."""
        self.tree.clear()
        if findings is None:
            self.caption.setText("")
            return
        if not findings:
            self.caption.setText(
                translate(
                    "LintPanel", "<b>{folder}</b>: no findings (index, shards, names, config)."
                ).format(folder=folder)
            )
            return
        caption = (
            translate("LintPanel", "<b>1 finding in {folder}</b> (as checkpoint-inspector lint)")
            if len(findings) == 1
            else translate(
                "LintPanel", "<b>{n} findings in {folder}</b> (as checkpoint-inspector lint)"
            )
        )
        self.caption.setText(caption.format(n=len(findings), folder=folder))
        for f in findings:
            text = finding_text(f)
            item = QTreeWidgetItem([severity_text(f.severity), f"{f.code}: {text}"])
            item.setToolTip(1, text)
            for name in f.tensors[:50]:
                item.addChild(
                    QTreeWidgetItem(["", translate("LintPanel", "tensor {name}").format(name=name)])
                )
            for name in f.files:
                item.addChild(
                    QTreeWidgetItem(["", translate("LintPanel", "file {name}").format(name=name)])
                )
            self.tree.addTopLevelItem(item)
        self.tree.resizeColumnToContents(0)
