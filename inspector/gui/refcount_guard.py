"""Guard against a reference-count defect seen with PySide6 6.12.0 on CPython 3.11.

There, every Python-side ``Signal.emit()`` drops one reference to ``True`` it never took, and
C++ signals delivered to Python slots drop references to ``None``. pyqtgraph emits signals on
every resize and repaint, so after a long enough session ``True``'s count reaches zero and the
interpreter aborts ("Fatal Python error: bool_dealloc"). CPython 3.12+ makes these singletons
immortal, so there the defect is harmless.

:func:`install` detects the leak (a few probe emits) and, only if present, keeps the counts of
``True``, ``False`` and ``None`` far from zero with a cheap periodic check. Remove this module
once the pinned PySide6 no longer leaks (``signal_emit_leaks()`` returns False).
"""

from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal

LOW_WATER = 1 << 22  # top up when a count falls below ~4 M
TOP_UP = 1 << 30
_SINGLETONS = (True, False, None)
_timer: QTimer | None = None
_leaks: bool | None = None


class _Probe(QObject):
    fired = Signal()


def signal_emit_leaks() -> bool:
    """True if emitting a Python signal loses references to ``True`` (checked once)."""
    global _leaks
    if _leaks is None:
        if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
            _leaks = False
        else:
            probe = _Probe()
            before = sys.getrefcount(True)
            for _ in range(64):
                probe.fired.emit()
            _leaks = sys.getrefcount(True) < before - 32
            probe.deleteLater()
    return _leaks


def top_up() -> None:
    for obj in _SINGLETONS:
        if sys.getrefcount(obj) < LOW_WATER:
            # ob_refcnt is the first field of every CPython object (3.11 and older)
            ctypes.c_ssize_t.from_address(id(obj)).value += TOP_UP


def install(interval_ms: int = 2000) -> bool:
    """Start the guard if this PySide6 leaks; returns whether it is active. Idempotent."""
    global _timer
    if not signal_emit_leaks():
        return False
    top_up()
    app = QCoreApplication.instance()
    if _timer is None and app is not None:
        _timer = QTimer(app)
        _timer.setInterval(interval_ms)
        _timer.timeout.connect(top_up)
        _timer.start()
    return True
