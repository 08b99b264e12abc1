"""The PySide6 6.12 signal refcount leak must not be able to abort a long session."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_many_emits_do_not_abort_the_interpreter():
    code = textwrap.dedent(
        """
        import sys
        from PySide6.QtCore import QObject, Signal, QCoreApplication
        app = QCoreApplication([])
        from inspector.gui import refcount_guard
        active = refcount_guard.install()

        class S(QObject):
            s = Signal(bool)

        o = S()
        o.s.connect(lambda b: None)
        start = sys.getrefcount(True)
        for i in range(200_000):
            o.s.emit(True)
            if i % 50_000 == 0:
                refcount_guard.top_up()
        print("active" if active else "inactive", "ok")
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("ok")
