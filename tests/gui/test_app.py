"""The entry point the CLI calls: run(path, target, screenshot, reference)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QImage

from inspector.gui.app import run


@pytest.fixture(autouse=True)
def private_settings(tmp_path, qapp):
    QSettings.setPath(
        QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path / "cfg")
    )
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "cfg"))


def test_screenshot_renders_the_loaded_window(model_file, tmp_path):
    out = tmp_path / "shot.png"
    assert run(str(model_file), target="F32", screenshot=str(out)) == 0
    img = QImage(str(out))
    assert img.width() >= 1000 and img.height() >= 650
    # not a blank image: the highlighted rows and the plot put many colours on it
    colours = {img.pixel(x, y) for x in range(0, img.width(), 7) for y in range(0, img.height(), 7)}
    assert len(colours) > 20


def test_screenshot_with_reference(model_file, f32_file, tmp_path):
    out = tmp_path / "cmp.png"
    assert run(str(model_file), target="BF16", screenshot=str(out), reference=str(f32_file)) == 0
    assert QImage(str(out)).width() >= 1000


def test_screenshot_of_a_bad_path_exits_2_with_one_line(tmp_path, capsys):
    out = tmp_path / "bad.png"
    assert run(str(tmp_path / "nope.safetensors"), screenshot=str(out)) == 2
    err = capsys.readouterr().err
    assert err.startswith("checkpoint-inspector: error: ")
    assert "nope.safetensors" in err and err.count("\n") == 1
    assert not out.exists()


def test_cli_screenshot_end_to_end(model_file, tmp_path):
    out = tmp_path / "cli.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspector",
            "--screenshot",
            str(out),
            "--target",
            "f32",
            str(model_file),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    img = QImage(str(out))
    assert img.width() >= 1000 and img.height() >= 650
