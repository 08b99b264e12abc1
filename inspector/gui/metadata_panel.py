"""The "Metadata" tab: a safetensors file's ``__metadata__`` (or a sharded checkpoint's index
``metadata``, or a Burnpack file's ``metadata`` and typed scalars), key by key. Written by
whoever saved the file: shown as text, never interpreted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QTreeWidgetItem, QWidget

from .caption_tree import CaptionTree
from .i18n import translate

if TYPE_CHECKING:
    from inspector.core.formats.burnpack import BurnpackFacts

_SHOWN = 5000  # a header may hold millions of keys: the tab shows the first ones
_CHARS = 2000  # and a value of megabytes is clipped


class MetadataPanel(CaptionTree):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(
            [translate("MetadataPanel", "key"), translate("MetadataPanel", "value")], parent
        )
        self.tree.setUniformRowHeights(True)

    def set_metadata(
        self,
        metadata: dict[str, Any] | None,
        sharded: bool = False,
        burn: BurnpackFacts | None = None,
        gguf: bool = False,
    ) -> None:
        """Show ``metadata`` (None or empty clears the tab); ``burn``: a Burnpack file's facts,
        whose scalars follow its metadata; ``gguf``: the entries are a GGUF file's key/values
        (long arrays summarised)."""
        self.tree.clear()
        scalars = burn.scalar_values() if burn is not None else {}
        if not metadata and not scalars:
            self.caption.setText("")
            return
        if gguf:
            what = translate("MetadataPanel", "the GGUF file's <b>key/values</b>")
        elif burn is not None:
            what = translate("MetadataPanel", "the Burnpack file's <b>metadata</b> and scalars")
        elif sharded:
            what = translate("MetadataPanel", "the index's <b>metadata</b>")
        else:
            what = translate("MetadataPanel", "the file's <b>__metadata__</b>")
        entries = list((metadata or {}).items())
        scalar = translate("MetadataPanel", "{name} (scalar)")
        entries += [(scalar.format(name=k), repr(v)) for k, v in scalars.items()]
        one = len(entries) == 1
        if gguf:  # a cast writes safetensors, which has no place for GGUF's key/values
            caption = (
                translate("MetadataPanel", "{what}: 1 entry, as saved (a cast does not carry it).")
                if one
                else translate(
                    "MetadataPanel", "{what}: {n} entries, as saved (a cast does not carry them)."
                )
            )
        else:
            caption = (
                translate("MetadataPanel", "{what}: 1 entry, as saved (cast keeps it).")
                if one
                else translate("MetadataPanel", "{what}: {n} entries, as saved (cast keeps them).")
            )
        self.caption.setText(caption.format(what=what, n=f"{len(entries):,}"))
        for key, value in entries[:_SHOWN]:
            text = value if isinstance(value, str) else repr(value)
            if len(text) > _CHARS:
                text = text[:_CHARS] + "…"
            item = QTreeWidgetItem([str(key)[:_CHARS], text])
            item.setToolTip(1, text)
            self.tree.addTopLevelItem(item)
        self.tree.resizeColumnToContents(0)
