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
7. a DeepSeek-style FP8 block-scaled folder compared with the weights it was quantized from:
   codes and scales marked quantized, the dequantized values, the precision lost per weight.
8. the Values and Heatmap tabs of one LLM-style weight (screenshot-values*.png).
6. a Lightning-style `.ckpt` pickle with its Pickle tab, and a transformers model folder with F32
   weights under a bfloat16 config, its Lint tab open (need torch and transformers: the test deps).
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
        pickle_and_folder_screenshots(tmp)
        quantized_screenshot(tmp)
        burnpack_screenshot(tmp)
        gguf_screenshot()
        values_screenshots(tmp)
        quantize_screenshots(tmp)
        quantize_screenshots(tmp, "zh_CN")  # last: the translator stays installed
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


def _shoot(path: str, out: str, tab: str, tmp: str) -> None:
    from PySide6.QtCore import QSettings

    from inspector.gui.app import take_screenshot, wait_for
    from inspector.gui.main_window import MainWindow

    settings = QSettings(os.path.join(tmp, f"{tab}.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)  # a fresh window: F32, or the folder's config.json dtype
    win.resize(1280, 800)
    win.show()
    win.open_path(path)
    wait_for([win.loaded, win.details_ready], 30_000)
    tabs = win.tensor_page.plots_tabs
    panel = getattr(tabs, tab)
    for _ in range(300):  # the lint answer comes from a worker
        if tabs.isTabVisible(tabs.indexOf(panel)):
            break
        wait_for([], 20)
    tabs.setCurrentWidget(panel)
    take_screenshot(win, out, minimum=(1280, 800))
    win.close()


def pickle_and_folder_screenshots(tmp: str) -> None:
    try:
        import torch
        import transformers
    except ImportError:
        print("skipped the pickle and model-folder screenshots: torch/transformers missing")
        return
    torch.manual_seed(0)
    sd = {}
    for i in range(4):
        sd[f"model.layers.{i}.self_attn.q_proj.weight"] = torch.randn(64, 64, dtype=torch.float64)
        sd[f"model.layers.{i}.mlp.up_proj.weight"] = torch.randn(128, 64).t()
        sd[f"model.layers.{i}.input_layernorm.weight"] = torch.ones(64)
    sd["model.embed_tokens.weight"] = torch.randn(100, 64).bfloat16()
    ckpt = os.path.join(tmp, "last.ckpt")
    torch.save(
        {"state_dict": sd, "epoch": 3, "global_step": 1200, "hyper_parameters": {"lr": 3e-4}}, ckpt
    )
    _shoot(ckpt, str(DOCS / "screenshot-pickle.png"), "pickle_panel", tmp)
    cfg = transformers.LlamaConfig(
        vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=32,
    )  # fmt: skip
    folder = Path(tmp) / "tiny-llama"
    transformers.LlamaForCausalLM(cfg).save_pretrained(folder, max_shard_size="8KB")
    text = (folder / "config.json").read_text().replace('"float32"', '"bfloat16"')
    (folder / "config.json").write_text(text)  # F32 weights under a bfloat16 config
    first = sorted(folder.glob("model-*.safetensors"))[0]
    (folder / "model.safetensors").write_bytes(first.read_bytes())  # a stray file
    _shoot(str(folder), str(DOCS / "screenshot-model-folder.png"), "lint_panel", tmp)


def quantized_screenshot(tmp: str) -> None:
    import ml_dtypes
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from inspector.core.dtypes import DTYPES
    from inspector.core.save.writer import save_arrays
    from tests.quant_folders import deepseek_folder

    folder = Path(tmp) / "deepseek-fp8"
    originals = []
    for i in range(4):
        made = deepseek_folder(folder / f"part{i}", 256, 384, seed=i)
        originals.append((f"model.layers.{i}.mlp.up_proj.weight", made))
    tensors, plain = [], []
    for i, (name, made) in enumerate(originals):
        tensors += [(name, DTYPES["F8_E4M3"], made["codes"]),
                    (name + "_scale_inv", DTYPES["F32"], made["scale"])]  # fmt: skip
        plain.append((name, DTYPES["BF16"], made["true"].astype(ml_dtypes.bfloat16)))
        norm = (f"model.layers.{i}.post_attention_layernorm.weight", DTYPES["BF16"],
                np.ones(384, ml_dtypes.bfloat16))  # fmt: skip
        tensors.append(norm)
        plain.append(norm)
    save_arrays(folder / "model.safetensors", tensors)
    (folder / "config.json").write_text((folder / "part0" / "config.json").read_text())
    original = Path(tmp) / "original.safetensors"
    save_arrays(original, plain)
    subprocess.run(
        [*CLI, "--screenshot", str(DOCS / "screenshot-quantized.png"), "--reference",
         str(original), str(folder / "model.safetensors")],
        check=True,
    )  # fmt: skip


def quantize_screenshots(tmp: str, lang: str | None = None) -> None:
    """Quantize… on a 4-layer llama whose layer 2 MLP has outlier inputs (as real LLMs do): the
    six schemes side by side, and NVFP4's error per weight in the precision tab, at 1280×800
    and 800×600 (screenshot-quantize*.png; the dialog is its own window, grabbed beside)."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from inspector.gui.app import take_screenshot, wait_for
    from inspector.gui.i18n import install_translator
    from inspector.gui.main_window import MainWindow

    sys.path.insert(0, str(ROOT))
    from tests.core.quantize.models import llama_folder

    folder = llama_folder(Path(tmp) / f"llama-4{lang or ''}", layers=4, outliers=2)
    settings = QSettings(os.path.join(tmp, "q.ini"), QSettings.Format.IniFormat)
    if lang:
        install_translator(QApplication.instance(), lang)
    win = MainWindow(settings=settings)
    suffix = f"-{lang}" if lang else ""
    for size in ((1280, 800), (800, 600)):
        win.resize(*size)
        win.show()
        win.open_path(str(folder))
        wait_for([win.loaded], 30_000)
        qc = win.quantize_controller
        dlg = qc.open_dialog()
        wait_for([qc.preview_done], 120_000)
        dlg.table.selectRow(4)  # NVFP4A16
        tag = "" if size == (1280, 800) else f"-{size[0]}x{size[1]}"
        take_screenshot(win, str(DOCS / f"screenshot-quantize{tag}{suffix}.png"), minimum=size)
        dlg.grab().save(str(DOCS / f"screenshot-quantize-dialog{tag}{suffix}.png"))
        dlg.reject()
    win.close()


def burnpack_screenshot(tmp: str) -> None:
    """burn's own MNIST file (tests/data/burn), cast to F16 as a .bpk: param ids, the hint's
    BurnpackStore line."""
    f16 = os.path.join(tmp, "mnist.bpk")
    subprocess.run(
        [*CLI, "cast", str(ROOT / "tests" / "data" / "burn" / "mnist.bpk"), "--target", "F16",
         "-o", f16], check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    subprocess.run(
        [*CLI, "--screenshot", str(DOCS / "screenshot-burnpack.png"), "--target", "F32", f16],
        check=True,
    )


def gguf_screenshot() -> None:
    """llama.cpp's Q4_K_M of a tiny Llama (tests/data/gguf) compared with its HF original: each
    tensor under its HF name, the precision the block types lost."""
    data = ROOT / "tests" / "data" / "gguf"
    subprocess.run(
        [*CLI, "--screenshot", str(DOCS / "screenshot-gguf.png"), "--reference",
         str(data / "tiny-llama" / "model.safetensors"), str(data / "tiny-llama-Q4_K_M.gguf")],
        check=True,
    )  # fmt: skip


def values_screenshots(tmp: str) -> None:
    """An MLP weight with two outlier input channels and a smooth low-rank part: the heatmap
    at 1280×800 (largest |x| per block), the value grid at 800×600."""
    import ml_dtypes
    import numpy as np
    from PySide6.QtCore import QSettings

    from inspector.core.dtypes import DTYPES
    from inspector.core.save.writer import save_arrays
    from inspector.gui.app import take_screenshot, wait_for
    from inspector.gui.main_window import MainWindow

    rng = np.random.default_rng(0)
    rows, cols = np.arange(1536)[:, None], np.arange(1024)[None, :]
    w = rng.standard_normal((1536, 1024)) * 0.02 + 0.03 * np.sin(rows / 90) * np.cos(cols / 70)
    w[:, 100] *= 3  # outlier channels, as LLMs have them
    w[:, 700] *= -2.5
    name = "model.layers.0.mlp.down_proj.weight"
    path = os.path.join(tmp, "values.safetensors")
    save_arrays(
        path,
        [
            ("model.embed_tokens.weight", DTYPES["BF16"], (w[:512] * 2).astype(ml_dtypes.bfloat16)),
            (name, DTYPES["BF16"], w.astype(ml_dtypes.bfloat16)),
            ("model.layers.0.mlp.experts", DTYPES["F32"], w[:384].reshape(4, 96, 1024)),
            ("model.norm.weight", DTYPES["BF16"], np.ones(1024, ml_dtypes.bfloat16)),
        ],
    )
    for size, tab, out in (
        ((1280, 800), "heatmap_view", "screenshot-values.png"),
        ((800, 600), "values_view", "screenshot-values-800x600.png"),
    ):
        settings = QSettings(os.path.join(tmp, f"values{size[0]}.ini"), QSettings.Format.IniFormat)
        win = MainWindow(settings=settings, target="BF16")
        win.resize(*size)
        win.show()
        win.open_path(path)
        wait_for([win.loaded, win.details_ready], 30_000)
        win.select_tensor(name)
        wait_for([win.details_ready], 30_000)
        details = win.tensor_page.details
        vc = win.values_controller
        ready = vc.heatmap_ready if tab == "heatmap_view" else vc.values_ready
        details.view_tabs.setCurrentWidget(getattr(details, tab))
        wait_for([ready], 30_000)
        if tab == "values_view":
            details.values_view.set_window((), 0, 98)  # the outlier channel 100
            wait_for([ready], 30_000)
        take_screenshot(win, str(DOCS / out), minimum=size)
        win.close()


if __name__ == "__main__":
    main()
