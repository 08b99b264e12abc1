"""Counts of one read as English: "1 entry", "1 tensor cast", "1 weight quantized" (the window
said "1 entries" of every file whose metadata is safetensors' usual {"format": "pt"})."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays
from inspector.gui.metadata_panel import MetadataPanel
from inspector.gui.plot_tabs import PlotTab
from tests.gui.waits import wait_ms


def _open(qtbot, window, path: Path) -> None:
    with qtbot.waitSignal(window.loaded, timeout=wait_ms(20_000)):
        window.open_path(str(path))


def test_one_metadata_entry(qtbot):
    panel = MetadataPanel()
    qtbot.addWidget(panel)
    panel.set_metadata({"format": "pt"})
    assert (
        panel.caption.text() == "the file's <b>__metadata__</b>: 1 entry, as saved (cast keeps it)."
    )
    panel.set_metadata({"format": "pt", "b": "c"})
    assert panel.caption.text() == (
        "the file's <b>__metadata__</b>: 2 entries, as saved (cast keeps them)."
    )
    panel.set_metadata({"general.name": "x"}, gguf=True)
    assert panel.caption.text().endswith(": 1 entry, as saved (a cast does not carry it).")


def test_one_tensor_cast_and_one_weight_quantized(qtbot, controller_parts, tmp_path: Path):
    from inspector.gui.quantize_controller import QuantizeController

    session, window, cast, page = controller_parts
    path = tmp_path / "one.safetensors"
    rng = np.random.default_rng(0)
    save_arrays(path, [("layer.weight", DTYPES["F64"], rng.standard_normal((256, 256)))])
    _open(qtbot, window, path)
    with qtbot.waitSignal(cast.cast_done, timeout=wait_ms(30_000)):
        cast.start_cast(str(tmp_path / "out.safetensors"), DTYPES["F32"], ())
    bar = window.views.message_bar
    assert re.fullmatch(
        r"Saved out\.safetensors in \d+\.\d s: 1 tensor cast to F32, 0 of them lossless\.", bar.text
    ), bar.text
    caption = page.plots_tabs.precision_panel.caption.text()
    assert caption.startswith("<b>1 tensor cast to F32</b> (out.safetensors): 0 lossless"), caption
    assert page.plots_tabs.isTabVisible(PlotTab.CAST)

    _open(qtbot, window, tmp_path / "out.safetensors")  # F32 now: quantizable
    qc = QuantizeController(session, window.runner, window.views, parent=page)
    with qtbot.waitSignal(qc.preview_done, timeout=wait_ms(60_000)):
        dlg = qc.open_dialog()
    assert dlg.status.text().startswith("1 Linear weight measured, 0 left as they are; ")
    assert " · 1 weight quantized, 0 left as they are" in (
        page.plots_tabs.precision_panel.caption.text()
    )
    dlg.reject()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=wait_ms(5000))
    with qtbot.waitSignal(qc.quantize_done, timeout=wait_ms(60_000)):
        qc.start_quantize("W8A16", str(tmp_path / "q"), ())
    assert re.fullmatch(r"Saved q in \d+\.\d s: 1 weight quantized with W8A16, .+\.", bar.text)


def test_one_weight_quantized_in_zh_cn(qtbot, zh_cn, controller_parts, tmp_path: Path):
    from inspector.gui.quantize_controller import QuantizeController

    session, window, _cast, page = controller_parts
    path = tmp_path / "one.safetensors"
    rng = np.random.default_rng(0)
    save_arrays(
        path, [("layer.weight", DTYPES["F32"], rng.standard_normal((256, 256), np.float32))]
    )
    _open(qtbot, window, path)
    qc = QuantizeController(session, window.runner, window.views, parent=page)
    with qtbot.waitSignal(qc.quantize_done, timeout=wait_ms(60_000)):
        qc.start_quantize("W8A16", str(tmp_path / "q"), ())
    bar = window.views.message_bar
    assert re.fullmatch(r"已保存 q，用时 \d+\.\d 秒：1 个权重以 W8A16 量化，.+。", bar.text), (
        bar.text
    )
