"""The session package imports and its tests pass with PySide6 made unimportable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

RUN = """
import sys
for name in ("PySide6", "pyqtgraph", "shiboken6", "superqt"):
    sys.modules[name] = None  # any import of these now raises ImportError
import pytest
sys.exit(pytest.main(["-q", "-p", "no:pytest-qt", "-p", "no:cacheprovider", sys.argv[1]]))
"""


def test_session_tests_pass_with_qt_blocked():
    proc = subprocess.run(
        [sys.executable, "-c", RUN, str(HERE / "test_session.py")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=HERE.parents[1],
        env=dict(os.environ, PYTHONPATH=str(HERE.parents[1])),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout
