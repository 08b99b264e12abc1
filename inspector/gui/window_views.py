"""The views the window's controllers drive, handed to them explicitly.

:class:`~.main_window.MainWindow` builds the widgets, puts the ones a controller touches in a
:class:`WindowViews` and passes that (with the session and the job runner) to each controller.
A controller never sees the window: what it wants the window to do (show the tensor page, open
a saved file, take a target) it emits as a signal the window connects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QComboBox, QStatusBar, QWidget

    from .job_bar import JobBar
    from .message_bar import MessageBar
    from .tensor_page import TensorPage
    from .window_actions import WindowActions


@dataclass(frozen=True)
class WindowViews:
    page: TensorPage
    job_bar: JobBar
    message_bar: MessageBar
    actions: WindowActions
    target_box: QComboBox
    status_bar: QStatusBar
    settings: QSettings  # where the person's target choice is remembered
    dialog_parent: QWidget  # the dialogs a controller opens are modal to this

    def show_error(self, text: str) -> None:
        self.message_bar.show_message(text, "error")

    def flash(self, text: str, ms: int = 5000) -> None:
        self.status_bar.showMessage(text, ms)
