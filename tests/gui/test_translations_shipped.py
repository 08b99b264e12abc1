"""The compiled translation ships in the package (a pip install has no `make` step) and is
never stale: it is exactly what pyside6-lrelease makes of the committed .ts."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.gui.i18n import qm_path

TS = qm_path("zh_CN").with_suffix(".ts")


def test_the_committed_qm_is_what_lrelease_makes_of_the_ts(tmp_path):
    lrelease = shutil.which("pyside6-lrelease") or str(
        Path(sys.executable).with_name("pyside6-lrelease")
    )
    if not Path(lrelease).exists():
        pytest.skip("pyside6-lrelease is not installed")
    out = tmp_path / "zh_CN.qm"
    subprocess.run([lrelease, "-silent", str(TS), "-qm", str(out)], check=True)
    assert qm_path("zh_CN").read_bytes() == out.read_bytes(), "run `make translations`"


def test_a_language_without_a_translation_is_said_in_one_line(tmp_path):
    import os

    sample = Path(__file__).parents[2] / "resources" / "sample.safetensors"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", CHECKPOINT_INSPECTOR_LANG="fr_FR")
    r = subprocess.run(
        [sys.executable, "-m", "inspector", "--screenshot", str(tmp_path / "s.png"), str(sample)],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "checkpoint-inspector: no fr_FR translation; the window is in English\n" in r.stderr
