"""What the differing dtypes mean for the framework that loads the file, with the one-line fix."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from inspector.core.burn_hint import burn_load_line
from inspector.core.formats.burnpack import FORMAT_NAME as BURNPACK
from inspector.core.model_folder.config import ConfigMismatch
from inspector.core.summary import Summary
from inspector.gui.i18n import translate


class HintPanel(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("HintPanel")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        mid = self.palette().color(QPalette.ColorRole.Mid).name()
        self.setStyleSheet(f"#HintPanel {{ border: 1px solid {mid}; border-radius: 4px; }}")
        grid = QGridLayout(self)
        grid.setContentsMargins(8, 6, 8, 6)
        grid.setVerticalSpacing(3)
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.torch = QLabel()
        self.torch.setWordWrap(True)
        self.burn = QLabel()
        self.burn.setWordWrap(True)
        for lab in (self.title, self.torch, self.burn):
            lab.setTextFormat(Qt.TextFormat.RichText)
            lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.fix = QLineEdit()
        self.fix.setReadOnly(True)
        self.fix.setAcceptDrops(False)
        self.fix.setAccessibleName(translate("HintPanel", "burn-store fix"))
        f = self.fix.font()
        f.setFamily("monospace")
        f.setStyleHint(f.StyleHint.Monospace)
        self.fix.setFont(f)
        self.copy_button = QPushButton(translate("HintPanel", "Copy"))
        self.copy_button.setToolTip(translate("HintPanel", "Copy the line to the clipboard"))
        self.copy_button.clicked.connect(self.copy_fix)
        grid.addWidget(self.title, 0, 0, 1, 2)
        grid.addWidget(self.torch, 1, 0, 1, 2)
        grid.addWidget(self.burn, 2, 0, 1, 2)
        grid.addWidget(self.fix, 3, 0)
        grid.addWidget(self.copy_button, 3, 1)
        self.config_note = QLabel()
        self.config_note.setWordWrap(True)
        self.config_note.setTextFormat(Qt.TextFormat.RichText)
        self.config_note.hide()
        grid.addWidget(self.config_note, 4, 0, 1, 2)
        grid.setRowStretch(5, 1)  # in a tall tab area the lines stay together at the top
        self.active = False
        self._summary: Summary | None = None
        self._source: tuple[str, str, dict[str, str] | None] = ("", "safetensors", None)

    def set_source(self, path: str, fmt: str, metadata: dict[str, str] | None) -> None:
        """The open file, its format and metadata: they decide burn-store's loading line."""
        self._source = (path, fmt, metadata)
        self.update_summary(self._summary)

    def update_summary(self, s: Summary | None) -> None:
        """Fill in the texts; ``active`` says whether anything differs (the window shows it)."""
        self._summary = s
        self.active = s is not None and s.n_differ > 0
        if s is None or s.n_differ == 0:
            return
        kinds = ", ".join(f"{n} {k}" for k, n in s.differing_dtypes.items())
        title = (
            translate("HintPanel", "{n} tensor ({kinds}) differs from the model dtype {target}.")
            if s.n_differ == 1
            else translate(
                "HintPanel", "{n} tensors ({kinds}) differ from the model dtype {target}."
            )
        )
        self.title.setText(
            "<b>" + title.format(n=s.n_differ, kinds=kinds, target=s.target) + "</b>"
        )
        # PyTorch does not read Burnpack: its line would describe another file
        self.torch.setVisible(self._source[1] != BURNPACK)
        self.torch.setText(
            translate(
                "HintPanel",
                "<b>PyTorch</b> <code>load_state_dict</code> copies each tensor into the "
                "parameter's dtype: they become {target} silently.",
            ).format(target=s.target)
        )
        self.burn.setText(
            translate(
                "HintPanel",
                "<b>burn-store</b> keeps the stored dtype, so the model fails with "
                "<code>matmul: dtype mismatch</code>. Fix it there (or cast this file, Ctrl+S):",
            )
        )
        self.fix.setText(burn_load_line(*self._source, s.target))
        self.fix.setCursorPosition(0)
        self.copy_button.setText(translate("HintPanel", "Copy"))

    def set_config_note(self, mismatch: ConfigMismatch | None) -> None:
        """config.json's dtype against the weights, when they disagree (None hides the line)."""
        if mismatch is None:
            self.config_note.hide()
            return
        cfg = mismatch.config
        self.config_note.setText(
            translate(
                "HintPanel",
                "<b>config.json</b>: {key} = {dtype}, but {n} of {total} float tensors are "
                "{kinds}. transformers' <code>from_pretrained</code> casts them to {dtype} "
                "silently (the config wins); burn and <code>safe_open</code> keep {kinds}, and "
                "burn's first matmul with the model's dtype panics.",
            ).format(
                key=html.escape(cfg.dtype_key or ""),
                dtype=html.escape(cfg.dtype_text or ""),
                n=mismatch.n_off,
                total=mismatch.n_floats,
                kinds=mismatch.kinds,
            )
        )
        self.config_note.show()

    def copy_fix(self) -> None:
        QGuiApplication.clipboard().setText(self.fix.text())
        self.copy_button.setText(translate("HintPanel", "Copied"))
