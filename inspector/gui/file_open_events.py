"""Files opened from outside the process by the desktop: on macOS a double click in Finder or a
drop on the Dock icon arrives as a ``QFileOpenEvent`` to the application, not in argv, and may
come before the window exists (the app is launched by the event)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QFileOpenEvent
from PySide6.QtWidgets import QApplication


class FileOpenRouter(QObject):
    """Installed on the application before the window is made: paths that arrive early are
    kept, and opened once :meth:`attach` names who opens them; later ones open at once."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.pending: list[str] = []
        self._open: Callable[[str], object] | None = None
        app.installEventFilter(self)

    def attach(self, open_path: Callable[[str], object]) -> None:
        self._open = open_path
        pending, self.pending = self.pending, []
        if pending:  # several files before the window: the last one, as a later open would
            open_path(pending[-1])

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:
        if ev.type() != QEvent.Type.FileOpen or not isinstance(ev, QFileOpenEvent):
            return False
        path = ev.file() or ev.url().toLocalFile()
        if path:
            if self._open is None:
                self.pending.append(path)
            else:
                self._open(path)
        return True
