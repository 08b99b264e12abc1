"""An inline, non-modal message strip (error / info) with an optional action button."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStyle,
    QToolButton,
    QWidget,
)

from .i18n import translate

_TINTS = {
    "error": QColor(220, 50, 47),
    "warning": QColor(203, 150, 0),
    "info": QColor(38, 139, 210),
    "ok": QColor(40, 160, 70),
}
_ICONS = {
    "error": QStyle.StandardPixmap.SP_MessageBoxCritical,
    "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
    "info": QStyle.StandardPixmap.SP_MessageBoxInformation,
    "ok": QStyle.StandardPixmap.SP_DialogApplyButton,
}


def message_colours(kind: str) -> tuple[QColor, QColor]:
    """(background, border) of a message kind: a fixed tint over the application palette's window
    colour. Never derived from this widget's palette, which its own last stylesheet has changed
    (that blended every bar into the one before: errors drawn green, infos drifting to navy)."""
    base = QApplication.palette().color(QPalette.ColorRole.Window)
    tint = _TINTS.get(kind, _TINTS["info"])
    a = 0.18
    bg = QColor(
        round(base.red() * (1 - a) + tint.red() * a),
        round(base.green() * (1 - a) + tint.green() * a),
        round(base.blue() * (1 - a) + tint.blue() * a),
    )
    return bg, tint


class MessageBar(QFrame):
    action_triggered = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("MessageBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 4, 4)
        self.icon = QLabel()
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.action = QPushButton()
        self.action.clicked.connect(self._on_action)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip(translate("MessageBar", "Dismiss"))
        self.close_button.clicked.connect(self.hide)
        lay.addWidget(self.icon)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.action)
        lay.addWidget(self.close_button)
        self.kind = ""
        self._callback: Callable[[], object] | None = None
        self.hide()

    def show_message(
        self,
        text: str,
        kind: str = "error",
        action_text: str | None = None,
        action: Callable[[], object] | None = None,
    ) -> None:
        self.kind = kind
        self.label.setText(text)
        self.setAccessibleName(f"{kind}: {text}")
        bg, tint = message_colours(kind)
        self.setStyleSheet(
            f"#MessageBar {{ background: {bg.name()}; border: 1px solid {tint.name()};"
            " border-radius: 4px; }"
        )
        style = self.style()
        self.icon.setPixmap(style.standardIcon(_ICONS.get(kind, _ICONS["info"])).pixmap(20, 20))
        self._callback = action
        self.action.setVisible(bool(action_text))
        self.action.setText(action_text or "")
        self.show()

    @property
    def text(self) -> str:
        return self.label.text()

    def _on_action(self) -> None:
        cb = self._callback
        self.hide()
        if cb is not None:
            cb()
        self.action_triggered.emit()
