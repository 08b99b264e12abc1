"""PySide6 6.12.0 on CPython 3.11 drops a reference to True on every Python-side emit, and
pyqtgraph emits on every repaint: a long session aborts with "bool_dealloc". pyproject excludes
that release; this fails if an environment brings it back."""

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

        class S(QObject):
            s = Signal(bool)

        o = S()
        o.s.connect(lambda b: None)
        before = sys.getrefcount(True)
        for i in range(200_000):
            o.s.emit(True)
        print("delta", sys.getrefcount(True) - before)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert abs(int(proc.stdout.split()[-1])) < 100
