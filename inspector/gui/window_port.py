"""What the window's two main controllers use of the window, as a protocol: they depend on this,
not on :class:`~.main_window.MainWindow`, which assembles them (no import circle). The details
controller needs less and gets only the session, the runner and the tensor page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings, SignalInstance
    from PySide6.QtWidgets import QComboBox, QStatusBar

    from inspector.session import Session

    from .job_bar import JobBar
    from .job_runner import JobRunner
    from .message_bar import MessageBar
    from .tensor_page import TensorPage
    from .window_actions import WindowActions


class PlotsAndJobs(Protocol):
    """The window controller as the cast controller sees it."""

    job_started: float

    def update_plots(self) -> None: ...


class WindowPort(Protocol):
    session: Session
    runner: JobRunner
    tensor_page: TensorPage
    job_bar: JobBar
    message_bar: MessageBar
    window_actions: WindowActions
    target_box: QComboBox
    settings: QSettings
    controller: PlotsAndJobs
    choice_dialog: Any  # the open "which checkpoint?" dialog, for tests to answer
    error_box: Any  # the open cast error box, for tests to read
    # signals tests and the window wait on
    loaded: SignalInstance
    load_failed: SignalInstance
    diff_done: SignalInstance
    diff_failed: SignalInstance
    cast_done: SignalInstance
    cast_failed: SignalInstance
    cast_cancelled: SignalInstance

    def statusBar(self) -> QStatusBar: ...

    def show_error(self, text: str) -> None: ...

    def open_path(self, path: str) -> None: ...

    def set_target(self, name: str) -> None: ...
