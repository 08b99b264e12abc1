"""`pip install .` gives a console script, a gui script, and the resources inside the package.

Slow: builds the wheel (pip fetches hatchling for the isolated build).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (whl,) = out.glob("checkpoint_inspector-*.whl")
    return whl


def test_wheel_declares_both_entry_points(wheel):
    with zipfile.ZipFile(wheel) as z:
        (ep,) = [n for n in z.namelist() if n.endswith(".dist-info/entry_points.txt")]
        text = z.read(ep).decode()
        names = set(z.namelist())
    assert "[console_scripts]\ncheckpoint-inspector = inspector.cli:console_main" in text
    assert "[gui_scripts]\ncheckpoint-inspector-gui = inspector.cli:gui_main" in text
    assert "inspector/resources/icons/checkpoint-inspector.png" in names
    assert "inspector/resources/sample.safetensors" in names
    assert "inspector/gui/i18n/checkpoint_inspector_zh_CN.qm" in names  # `pip install .` too
    assert not [n for n in names if n.startswith(("tests/", "packaging/"))]


def test_installed_scripts_run_and_find_resources(wheel, tmp_path):
    target = tmp_path / "site"
    install = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index"]
    subprocess.run(
        [*install, "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    scripts = {p.name for p in (target / "bin").iterdir()}
    assert {"checkpoint-inspector", "checkpoint-inspector-gui"} <= scripts
    env = dict(os.environ, PYTHONPATH=str(target), QT_QPA_PLATFORM="offscreen")
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "from inspector.assets import resource_path as p; "
            "print(p('icons', 'checkpoint-inspector.png')); print(p('sample.safetensors'))",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=tmp_path,  # not the checkout, whose inspector/ would shadow the installed one
    )
    icon, sample = map(Path, r.stdout.split("\n")[:2])
    assert icon.is_file() and sample.is_file()
    assert target in icon.parents  # the installed copy, not the checkout's resources/
    r = subprocess.run(
        [sys.executable, str(target / "bin" / "checkpoint-inspector"), "list", str(sample)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "embeddings.position_ids" in r.stdout


def test_an_installed_wheel_shows_the_window_in_chinese(wheel, tmp_path):
    """`pip install .` has no `make` step: the translation must come with the wheel."""
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
         str(target), str(wheel)], check=True, capture_output=True,
    )  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(target), QT_QPA_PLATFORM="offscreen")
    code = (
        "from inspector.gui.app import ensure_app; from inspector.gui.i18n import "
        "install_translator; from PySide6.QtCore import QCoreApplication as Q; "
        "app = ensure_app(); print(install_translator(app, 'zh_CN'), "
        "Q.translate('Actions', '&File'))"
    )
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       cwd=tmp_path, check=True)  # fmt: skip
    lang, text = r.stdout.split()
    assert lang == "zh_CN" and text != "&File"
