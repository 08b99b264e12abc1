"""What a drop onto the window means. Drops are always taken as a copy: a file manager that was
offered "move" may otherwise delete the dropped checkpoint once we accept it."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

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


@dataclass(frozen=True)
class DropPlan:
    """What a drop asks for: a checkpoint to open, maybe a second to compare it with, or why
    neither (``problem``)."""

    open: str | None
    reference: str | None = None
    problem: str = ""


_SHARD = re.compile(r".+-\d+-of-\d+\.(safetensors|bin)")


def plan_drop(paths: list[str]) -> DropPlan:
    """One item: open it (a dropped ``config.json`` stands for its folder). Shards of one series:
    their folder. Two checkpoints: open the first, compare with the second."""
    if len(paths) == 1:
        path = paths[0]
        if os.path.basename(path) == "config.json":
            return DropPlan(os.path.dirname(os.path.abspath(path)))
        return DropPlan(path)
    folders = {os.path.dirname(os.path.abspath(p)) for p in paths}
    if len(folders) == 1 and all(_SHARD.fullmatch(os.path.basename(p)) for p in paths):
        return DropPlan(folders.pop())  # several shards: their folder holds the index
    if len(paths) == 2:
        return DropPlan(paths[0], paths[1])
    return DropPlan(
        None,
        problem=translate(
            "Drops",
            "{n} items were dropped; drop one checkpoint (or two to compare them: the first is "
            "opened, the second is the reference).",
        ).format(n=len(paths)),
    )
