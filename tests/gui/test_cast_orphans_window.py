"""Killing the window (SIGKILL) during a cast leaves none of its cast workers behind."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from inspector.core.cast.worker_policy import PROCESSES_ENV
from tests.core.test_cast_orphans import _children, _sparse_f32, kill_and_wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


_WINDOW = r"""
import sys
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from inspector.gui.main_window import MainWindow
from inspector.core.dtypes import DTYPES
app = QApplication([])
win = MainWindow(settings=QSettings(sys.argv[3], QSettings.Format.IniFormat))
win.loaded.connect(lambda *_: (win.start_cast(sys.argv[2], DTYPES["F16"]), print("casting", flush=True)))
win.open_path(sys.argv[1])
app.exec()
"""


def test_sigkill_of_the_window_during_a_cast_leaves_no_process(tmp_path):
    src, out_dir = tmp_path / "src.safetensors", tmp_path / "out"
    out_dir.mkdir()
    _sparse_f32(src)
    env = dict(
        os.environ, PYTHONPATH=os.getcwd(), QT_QPA_PLATFORM="offscreen", **{PROCESSES_ENV: "2"}
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", _WINDOW, str(src), str(out_dir / "o.safetensors"),
         str(tmp_path / "s.ini")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert proc.stdout.readline().strip() == "casting"
    tree: set[int] = set()
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        tree |= _children(proc.pid)
        time.sleep(0.02)
    assert tree, "the cast started no worker process"
    kill_and_wait_for(proc, tree)
