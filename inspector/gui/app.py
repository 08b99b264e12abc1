"""Entry point for the window: ``run(path, target, screenshot, reference)`` (called by the CLI)."""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import QEventLoop, QSettings, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

ORG = "checkpoint-inspector"
APP = "checkpoint-inspector"
DISPLAY_NAME = "Checkpoint Inspector"
SCREENSHOT_MIN = (1000, 650)
SCREENSHOT_SIZE = (1280, 800)
SCREENSHOT_TIMEOUT_MS = 120_000


def ensure_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv if argv is not None else sys.argv[:1])
    app.setOrganizationName(ORG)
    app.setApplicationName(APP)
    app.setApplicationDisplayName(DISPLAY_NAME)
    app.setDesktopFileName("io.github.checkpoint_inspector")
    return app  # type: ignore[return-value]


def wait_for(signals: list, timeout_ms: int) -> bool:
    """Spin an event loop until every signal in ``signals`` has fired once (or time runs out)."""
    loop = QEventLoop()
    remaining = set(range(len(signals)))
    timer = QTimer(singleShot=True, interval=timeout_ms)
    timer.timeout.connect(loop.quit)
    timed_out = [False]
    timer.timeout.connect(lambda: timed_out.__setitem__(0, True))

    def fired(i: int) -> None:
        remaining.discard(i)
        if not remaining:
            loop.quit()

    conns = []
    for i, sig in enumerate(signals):
        conns.append((sig, sig.connect(lambda *_a, i=i: fired(i))))
    timer.start()
    if remaining:
        loop.exec()
    timer.stop()
    for sig, c in conns:
        sig.disconnect(c)
    return not timed_out[0] and not remaining


def take_screenshot(win, out: str, minimum: tuple[int, int] = SCREENSHOT_MIN) -> bool:
    from PySide6.QtCore import QCoreApplication

    for _ in range(5):
        QCoreApplication.processEvents()
    w = max(win.width(), minimum[0])
    h = max(win.height(), minimum[1])
    if (w, h) != (win.width(), win.height()):
        win.resize(w, h)
        QCoreApplication.processEvents()
    return win.grab().save(out)


def run(
    path: str | None,
    target: str | None = "F32",
    screenshot: str | None = None,
    reference: str | None = None,
    lang: str | None = None,
) -> int:
    """Start the window. With ``screenshot`` render it offscreen once stats are drawn, save the
    PNG and return 0 (2 with a message on stderr if PATH cannot be opened)."""
    if screenshot and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    app = ensure_app()
    from .i18n import install_translator
    from .main_window import MainWindow

    used = install_translator(app, lang)
    wanted = lang or os.environ.get("CHECKPOINT_INSPECTOR_LANG")
    if wanted and used == "en" and not (wanted == "en" or wanted.startswith("en_")):
        sys.stderr.write(
            f"checkpoint-inspector: no {wanted} translation; the window is in English\n"
        )

    from .file_open_events import FileOpenRouter

    router = FileOpenRouter(app)  # macOS Finder/Dock opens, which may come before the window
    icon = window_icon()
    app.setWindowIcon(icon)
    settings = QSettings()
    win = MainWindow(settings=settings, target=target)
    win.setWindowIcon(icon)
    if screenshot:
        return _screenshot(app, win, path, screenshot, reference)
    win.show()
    router.attach(win.open_path)
    if path:
        win.open_path(path)
        if reference:
            win.loaded.connect(
                lambda *_: win.open_reference(reference) if win.reference is None else None
            )
    return app.exec()


def _fail(msg: str) -> int:
    sys.stderr.write(f"checkpoint-inspector: error: {' '.join(msg.split())}\n")
    return 2


_QUIET = ("This plugin does not support propagateSizeHints()",)


def _quiet_handler(mode, context, message: str) -> None:
    """Drop the offscreen plugin's harmless chatter; pass everything else to stderr."""
    if message not in _QUIET:
        sys.stderr.write(message + "\n")


def _screenshot(app, win, path: str | None, out: str, reference: str | None) -> int:
    from PySide6.QtCore import qInstallMessageHandler

    previous = qInstallMessageHandler(_quiet_handler)
    try:
        return _render(app, win, path, out, reference)
    finally:
        qInstallMessageHandler(previous)


def _render(app, win, path: str | None, out: str, reference: str | None) -> int:
    win.resize(*SCREENSHOT_SIZE)
    win.show()
    if not path:
        ok = take_screenshot(win, out)
        win.close()
        return 0 if ok else _fail(f"{out}: cannot write the PNG")
    failed: list[str] = []
    win.load_failed.connect(failed.append)
    win.open_path(path)
    wait_for([_first_of(win.loaded, win.load_failed)], SCREENSHOT_TIMEOUT_MS)
    if failed or win.ckpt is None:
        win.close()
        return _fail(failed[0] if failed else f"{path}: timed out while opening")
    waits = []
    if win.current_tensor() is not None:
        waits.append(win.details_ready)
    if reference:
        ref_failed: list[str] = []
        win.diff_failed.connect(ref_failed.append)
        waits.append(_first_of(win.diff_done, win.diff_failed))
        win.open_reference(reference)
    if waits and not wait_for(waits, SCREENSHOT_TIMEOUT_MS):
        sys.stderr.write("checkpoint-inspector: warning: statistics did not finish in time\n")
    if reference and ref_failed:
        win.close()
        return _fail(ref_failed[0])
    ok = take_screenshot(win, out)
    win.close()
    return 0 if ok else _fail(f"{out}: cannot write the PNG")


def _first_of(*signals):
    """A signal-like object that fires when any of ``signals`` fires."""
    from PySide6.QtCore import QObject, Signal

    class _Any(QObject):
        fired = Signal()

    relay = _Any()
    for s in signals:
        s.connect(lambda *_a: relay.fired.emit())
    _keep.append(relay)
    return relay.fired


_keep: list = []


def window_icon() -> QIcon:
    from inspector.assets import resource_path

    for name in ("checkpoint-inspector.png", "checkpoint-inspector.svg"):
        p = resource_path("icons", name)
        if p.is_file():
            return QIcon(str(p))
    return QIcon()
