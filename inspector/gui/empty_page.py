"""The page shown before anything is open: what to drop, an Open button, recent files."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from inspector.gui.i18n import translate

EMPTY_TEXT = QT_TRANSLATE_NOOP(
    "EmptyPage",
    "Drop a .safetensors file, a PyTorch .pt/.bin/.ckpt, a burn .bpk, a .gguf, an index.json or "
    "a model folder",
)


class EmptyPage(QWidget):
    sig_open_clicked = Signal()
    sig_path_activated = Signal(str)  # a recent file's link

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        ev = QVBoxLayout(self)
        ev.addStretch(2)
        self.empty_label = QLabel(translate("EmptyPage", EMPTY_TEXT))
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        f = self.empty_label.font()
        f.setPointSizeF(f.pointSizeF() * 1.6)
        self.empty_label.setFont(f)
        self.empty_label.setWordWrap(True)
        sub = QLabel(
            translate(
                "EmptyPage",
                "or use File ▸ Open (Ctrl+O). Tensors whose dtype differs from the model dtype "
                "are highlighted; Cast & Save (Ctrl+S) fixes them and plots the precision lost.\n"
                "Shift+drop a second checkpoint to compare against it.",
            )
        )
        sub.setAlignment(Qt.AlignmentFlag.AlignCenter)
        sub.setWordWrap(True)
        open_btn = QPushButton(translate("EmptyPage", "Open…"))
        open_btn.clicked.connect(self.sig_open_clicked)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(open_btn)
        row.addStretch(1)
        self.recent_label = QLabel()
        self.recent_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.recent_label.setTextFormat(Qt.TextFormat.RichText)
        self.recent_label.linkActivated.connect(self.sig_path_activated)
        ev.addWidget(self.empty_label)
        ev.addWidget(sub)
        ev.addLayout(row)
        ev.addSpacing(12)
        ev.addWidget(self.recent_label)
        ev.addStretch(3)

    def set_recent(self, paths: list[str]) -> None:
        if not paths:
            self.recent_label.setText("")
            return
        links = "<br>".join(f'<a href="{escape(p, quote=True)}">{escape(p)}</a>' for p in paths)
        title = translate("EmptyPage", "Recent")
        self.recent_label.setText(f"<b>{title}</b><br>{links}")
