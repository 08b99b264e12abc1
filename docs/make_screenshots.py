"""Regenerate the README screenshots in docs/ from the sample checkpoint, headless.

    QT_QPA_PLATFORM=offscreen .venv/bin/python docs/make_screenshots.py

1. the window as `checkpoint-inspector --screenshot` renders the sample (F32 target);
2. after Cast & Save to F16: precision plots, before/after histograms of one tensor;
3. comparing a BF16 copy with the original F32 values: the precision lost at save time;
docs/screenshot-dark.png is made by hand in a real X window: Xvfb, QT_QPA_PLATFORM=xcb,
QT_QPA_PLATFORMTHEME=gtk3 and GTK_THEME=Adwaita:dark (Debian: xvfb libgtk-3-0
gnome-themes-extra), so the dark palette comes from the platform theme, not from our code.

5. the compare view in Chinese (`--lang zh_CN`; needs a CJK font, e.g. Debian's
   fonts-wqy-microhei, on the machine that renders it);
4. an LLM-style checkpoint (390 tensors) at 800×600, 1280×800 and 1920×1080 with the module tree
   open, after a cast and a compare: names stay readable (screenshot-llm-WxH.png).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SAMPLE = ROOT / "resources" / "sample.safetensors"
CLI = [sys.executable, "-m", "inspector"]


def main() -> None:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QDialogButtonBox

    from inspector.gui.app import SCREENSHOT_SIZE, ensure_app, take_screenshot, wait_for
    from inspector.gui.main_window import MainWindow

    subprocess.run(
        [*CLI, "--screenshot", str(DOCS / "screenshot-loaded.png"), "--target", "F32", str(SAMPLE)],
        check=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        ensure_app()
        settings = QSettings(os.path.join(tmp, "settings.ini"), QSettings.Format.IniFormat)
        win = MainWindow(settings=settings, target="F16")
        win.resize(*SCREENSHOT_SIZE)
        win.show()
        win.open_path(str(SAMPLE))
        wait_for([win.loaded, win.details_ready], 30_000)
        win.cast_action.trigger()
        dlg = win.cast_dialog
        dlg.out_edit.setText(os.path.join(tmp, "sample.F16.safetensors"))
        dlg.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
        wait_for([win.cast_done], 60_000)
        win.select_tensor("encoder.layer.0.attention.self.query.weight")
        wait_for([win.details_ready], 30_000)
        take_screenshot(win, str(DOCS / "screenshot-cast.png"))
        win.close()

        bf16 = os.path.join(tmp, "sample.bf16.safetensors")
        f32 = os.path.join(tmp, "original.f32.safetensors")
        subprocess.run([*CLI, "cast", str(SAMPLE), "--target", "BF16", "-o", bf16], check=True)
        subprocess.run([*CLI, "cast", str(SAMPLE), "--target", "F32", "-o", f32], check=True)
        subprocess.run(
            [
                *CLI,
                "--screenshot",
                str(DOCS / "screenshot-compare.png"),
                "--target",
                "BF16",
                "--reference",
                f32,
                bf16,
            ],
            check=True,
        )
        llm_screenshots(tmp)
        subprocess.run(
            [*CLI, "--screenshot", str(DOCS / "screenshot-zh_CN.png"), "--lang", "zh_CN",
             "--target", "F16", "--reference", f32, bf16],
            check=True,
        )  # fmt: skip
    print("wrote", *sorted(p.name for p in DOCS.glob("screenshot-*.png")))


def llm_screenshots(tmp: str) -> None:
    from PySide6.QtCore import QSettings

    from inspector.core.dtypes import DTYPES
    from inspector.gui.app import take_screenshot, wait_for
    from inspector.gui.main_window import MainWindow

    sys.path.insert(0, str(ROOT))
    from tests.llm_checkpoint import write_llm_checkpoint

    src = os.path.join(tmp, "llm.safetensors")
    write_llm_checkpoint(src)
    for size in ((800, 600), (1280, 800), (1920, 1080)):
        settings = QSettings(os.path.join(tmp, f"llm{size[0]}.ini"), QSettings.Format.IniFormat)
        win = MainWindow(settings=settings, target="F32")
        win.resize(*size)
        win.show()
        win.show_module_tree(True)
        win.open_path(src)
        wait_for([win.loaded, win.details_ready], 30_000)
        out = os.path.join(tmp, f"llm.bf16.{size[0]}.safetensors")
        win.start_cast(out, DTYPES["BF16"])
        wait_for([win.cast_done], 60_000)
        win.open_reference(out)
        wait_for([win.diff_done], 60_000)
        take_screenshot(win, str(DOCS / f"screenshot-llm-{size[0]}x{size[1]}.png"), minimum=size)
        win.close()


if __name__ == "__main__":
    main()
