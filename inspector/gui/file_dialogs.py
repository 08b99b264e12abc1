"""The window's open dialogs: which files they offer, and where they start."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

OPEN_FILTER = (
    "Checkpoints (*.safetensors *.json *.pt *.pth *.bin *.ckpt *.bpk *.gguf);;safetensors "
    "(*.safetensors *.safetensors.index.json);;PyTorch pickles (*.pt *.pth *.bin *.ckpt);;"
    "Burnpack (*.bpk);;GGUF (*.gguf);;All files (*)"
)


def start_dir(recent: list[str]) -> str:
    """The folder of the last file opened (people open neighbours), else home."""
    return os.path.dirname(recent[0]) if recent else os.path.expanduser("~")


def ask_checkpoint(parent: QWidget, title: str, recent: list[str]) -> str | None:
    path, _ = QFileDialog.getOpenFileName(parent, title, start_dir(recent), OPEN_FILTER)
    return path or None


def ask_folder(parent: QWidget, title: str, recent: list[str]) -> str | None:
    return QFileDialog.getExistingDirectory(parent, title, start_dir(recent)) or None
