"""What a drop onto the window means. Drops are always taken as a copy: a file manager that was
offered "move" may otherwise delete the dropped checkpoint once we accept it."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent

from .i18n import translate

DragEvent = QDragEnterEvent | QDragMoveEvent | QDropEvent


def drop_action(ev: DragEvent) -> bool:
    """Accept an event carrying URLs, as a copy; ignore anything else. True if accepted."""
    md = ev.mimeData()
    if md is None or not md.hasUrls():
        ev.ignore()
        return False
    ev.setDropAction(Qt.DropAction.CopyAction)
    ev.accept()
    return True


def local_paths(ev: DragEvent) -> list[str]:
    md = ev.mimeData()
    if md is None or not md.hasUrls():
        return []
    return [u.toLocalFile() for u in md.urls() if u.isLocalFile()]


def path_from_drop(paths: list[str]) -> tuple[str | None, str]:
    """The one checkpoint a drop names, or None and the reason it names none or several."""
    if len(paths) == 1:
        return paths[0], ""
    folders = {os.path.dirname(os.path.abspath(p)) for p in paths}
    if len(folders) == 1 and all(p.endswith((".safetensors", ".bin")) for p in paths):
        return folders.pop(), ""  # several shards: their folder holds the index
    return None, translate(
        "Drops",
        "{n} items were dropped; drop one checkpoint at a time "
        "(a .safetensors file, a PyTorch .pt/.bin, an index.json, or a model folder).",
    ).format(n=len(paths))
