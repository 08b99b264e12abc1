"""The "Metadata" tab: a safetensors file's ``__metadata__`` (or a sharded checkpoint's index
``metadata``), key by key. Written by whoever saved the file: shown as text, never interpreted."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QTreeWidgetItem, QWidget

from .caption_tree import CaptionTree
from .i18n import translate

_SHOWN = 5000  # a header may hold millions of keys: the tab shows the first ones
_CHARS = 2000  # and a value of megabytes is clipped


class MetadataPanel(CaptionTree):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(
            [translate("MetadataPanel", "key"), translate("MetadataPanel", "value")], parent
        )
        self.tree.setUniformRowHeights(True)

    def set_metadata(self, metadata: dict[str, Any] | None, sharded: bool = False) -> None:
        """Show ``metadata`` (None or empty clears the tab)."""
        self.tree.clear()
        if not metadata:
            self.caption.setText("")
            return
        what = (
            translate("MetadataPanel", "the index's <b>metadata</b>")
            if sharded
            else translate("MetadataPanel", "the file's <b>__metadata__</b>")
        )
        self.caption.setText(
            translate("MetadataPanel", "{what}: {n} entries, as saved (cast keeps them).").format(
                what=what, n=f"{len(metadata):,}"
            )
        )
        for key, value in list(metadata.items())[:_SHOWN]:
            text = value if isinstance(value, str) else repr(value)
            if len(text) > _CHARS:
                text = text[:_CHARS] + "…"
            item = QTreeWidgetItem([str(key)[:_CHARS], text])
            item.setToolTip(1, text)
            self.tree.addTopLevelItem(item)
        self.tree.resizeColumnToContents(0)
