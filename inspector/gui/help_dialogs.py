"""Help ▸ Keyboard Shortcuts and Help ▸ About: non-modal boxes built from the actions themselves,
so the list never disagrees with what the keys do."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QT_TRANSLATE_NOOP
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMessageBox, QWidget

from inspector import __version__
from inspector.gui.i18n import translate

EXTRA_KEYS = [
    (
        QT_TRANSLATE_NOOP("Help", "Shift+drop"),
        QT_TRANSLATE_NOOP("Help", "Compare with the dropped checkpoint as reference"),
    ),
    (
        QT_TRANSLATE_NOOP("Help", "Esc (in the filter)"),
        QT_TRANSLATE_NOOP("Help", "Clear the filter"),
    ),
    (
        QT_TRANSLATE_NOOP("Help", "Ctrl+C (in the table)"),
        QT_TRANSLATE_NOOP("Help", "Copy the selected tensor's name"),
    ),
]


def shortcut_rows(actions: list[QAction]) -> list[tuple[str, str]]:
    rows = []
    for a in actions:
        key = a.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        if key:
            rows.append((key, a.text().replace("&&", "\0").replace("&", "").replace("\0", "&")))
    return rows + [(translate("Help", k), translate("Help", v)) for k, v in EXTRA_KEYS]


def show_shortcuts(parent: QWidget, actions: list[QAction]) -> QMessageBox:
    rows = "".join(
        f"<tr><td><b>{escape(k)}</b>&nbsp;&nbsp;</td><td>{escape(v)}</td></tr>"
        for k, v in shortcut_rows(actions)
    )
    box = QMessageBox(parent)
    box.setWindowTitle(translate("Help", "Keyboard Shortcuts"))
    box.setText(f"<table>{rows}</table>")
    box.open()
    return box


def show_about(parent: QWidget) -> QMessageBox:
    box = QMessageBox(parent)
    box.setWindowTitle(translate("Help", "About Checkpoint Inspector"))
    box.setText(
        f"<h3>Checkpoint Inspector {escape(__version__)}</h3>"
        "<p>"
        + translate(
            "Help",
            "See every tensor's dtype and shape, cast checkpoints bit-identically to PyTorch, "
            "and plot the precision lost.",
        )
        + "</p>"
        + "<p>"
        + translate(
            "Help",
            "MIT License. Documentation: README.md and docs/ of the source distribution;<br>"
            "<tt>checkpoint-inspector --help</tt> for the command line.",
        )
        + "</p>"
        "<p>Qt for Python (LGPL), pyqtgraph, NumPy, ml_dtypes, safetensors, msgspec.</p>"
    )
    box.open()
    return box
