"""The window tests do not depend on torch: with torch unimportable they still run (and pass),
only the few whose point is a torch-written file skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = """
import sys
sys.modules["torch"] = None  # any import of torch now raises ImportError
import pytest
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "tests/gui/test_window.py",
                      "tests/gui/test_state_bugs.py"]))
"""


def test_window_tests_run_without_torch():
    proc = subprocess.run(
        [sys.executable, "-c", RUN],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT)),
    )
    tail = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in tail and "skipped" not in tail, tail
