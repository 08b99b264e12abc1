"""The core and the CLI's non-GUI commands work with Qt absent (napari's headless habit)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample.safetensors"

BLOCK_QT = """
import sys
for name in ("PySide6", "pyqtgraph", "shiboken6", "superqt"):
    sys.modules[name] = None  # any import of these now raises ImportError
import importlib, pkgutil, inspector.core
for mod in pkgutil.iter_modules(inspector.core.__path__):
    importlib.import_module("inspector.core." + mod.name)
from inspector.cli.dispatch import main
sys.exit(main(["check", sys.argv[1]]))
"""


def test_core_modules_and_cli_run_without_qt():
    proc = subprocess.run(
        [sys.executable, "-c", BLOCK_QT, str(SAMPLE)], capture_output=True, text=True, timeout=120
    )
    assert "ImportError" not in proc.stderr, proc.stderr
    assert proc.returncode == 1  # the sample has F64 and BF16 tensors: check reports them
    assert "encoder.layer.1.attention.self.query.weight: F64 (expected F32)" in proc.stdout


def test_gui_without_qt_is_one_line_exit_2():
    code = BLOCK_QT.replace('main(["check", sys.argv[1]])', "main([sys.argv[1]])")
    proc = subprocess.run(
        [sys.executable, "-c", code, str(SAMPLE)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("checkpoint-inspector: error: the window cannot start")
    assert proc.stderr.count("\n") == 1
