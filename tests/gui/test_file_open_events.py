"""macOS opens files in a running (or launching) app with a QFileOpenEvent, not argv: before
the window exists the path waits, after it the window opens it at once."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QFileOpenEvent
from PySide6.QtWidgets import QApplication

from inspector.gui.file_open_events import FileOpenRouter


def test_a_file_opened_before_the_window_exists_opens_when_it_does(qtbot, window, model_file):
    app = QApplication.instance()
    router = FileOpenRouter(app)
    try:
        QApplication.sendEvent(app, QFileOpenEvent(str(model_file)))
        assert router.pending == [str(model_file)]
        with qtbot.waitSignal(window.loaded, timeout=20_000):
            router.attach(window.open_path)
        assert window.ckpt.path == str(model_file)
    finally:
        app.removeEventFilter(router)


def test_a_file_opened_later_opens_at_once(qtbot, window, model_file, f32_file):
    app = QApplication.instance()
    router = FileOpenRouter(app)
    router.attach(window.open_path)
    try:
        with qtbot.waitSignal(window.loaded, timeout=20_000):
            QApplication.sendEvent(app, QFileOpenEvent(QUrl.fromLocalFile(str(f32_file))))
        assert window.ckpt.path == str(f32_file)
        assert router.pending == []
    finally:
        app.removeEventFilter(router)


def test_quit_and_about_go_where_macos_users_look(window):
    from PySide6.QtGui import QAction

    found = {a.text(): a for a in window.findChildren(QAction)}
    quit_ = next(a for t, a in found.items() if t.replace("&", "") == "Quit")
    about = next(a for t, a in found.items() if t.replace("&", "").startswith("About"))
    assert quit_.menuRole() is QAction.MenuRole.QuitRole
    assert about.menuRole() is QAction.MenuRole.AboutRole
