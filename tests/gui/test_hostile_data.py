"""Data that must not shape the window: a huge name never sets its width, a folder with several
checkpoints offers the choice, extreme values still draw, overflow never reads as "0 error".
Fixtures use the numpy writer: torch is not the point here."""

from __future__ import annotations

import json

import numpy as np
from PySide6.QtCore import Qt

from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays
from tests.gui.waits import wait_ms

F32, F64 = DTYPES["F32"], DTYPES["F64"]


def open_and_wait(qtbot, win, path) -> None:
    with qtbot.waitSignals([win.loaded, win.details_ready], timeout=wait_ms(20_000)):
        win.open_path(str(path))


def test_a_2000_character_name_does_not_widen_the_window(qtbot, window, tmp_path):
    """Reliability 9: a name without spaces set the minimum width (2,000 chars -> 15.7k px)."""
    path = tmp_path / "long.safetensors"
    name = "x" * 2000
    save_arrays(path, [(name, F64, np.linspace(0, 1, 10)), ("b", F32, np.ones(3, np.float32))])
    window.resize(800, 600)
    open_and_wait(qtbot, window, path)
    assert window.current_tensor().name == name
    assert window.minimumSizeHint().width() < 800
    assert window.details.heading.toolTip().startswith("xxx")


def test_extreme_value_ranges_draw_a_histogram(qtbot, window, tmp_path):
    """Reliability 16: the window said "Too many bins for data range" for ±1e308."""
    path = tmp_path / "huge.safetensors"
    save_arrays(path, [("x", F64, np.array([1e308, -1e308, 0.0, 5e307]))])
    open_and_wait(qtbot, window, path)
    assert window.details.field("Range").startswith("-1e+308")
    assert "unavailable" not in window.details.field("Mean ± std")


def test_folder_with_two_index_variants_offers_a_choice(qtbot, window, tmp_path):
    """Reliability 15: variants are recognised; several indexes let the person pick one."""
    save_arrays(tmp_path / "a.safetensors", [("x", F32, np.ones(2, np.float32))])
    doc = json.dumps({"weight_map": {"x": "a.safetensors"}})
    (tmp_path / "model.safetensors.index.json").write_text(doc)
    (tmp_path / "model.safetensors.index.fp16.json").write_text(doc)
    with qtbot.waitSignal(window.load_failed, timeout=wait_ms(20_000)):
        window.open_path(str(tmp_path))
    dialog = window.choice_dialog
    assert dialog.comboBoxItems() == [
        "model.safetensors.index.fp16.json",
        "model.safetensors.index.json",
    ]
    with qtbot.waitSignal(window.loaded, timeout=wait_ms(20_000)):
        dialog.textValueSelected.emit("model.safetensors.index.fp16.json")
    assert window.ckpt.path.endswith("model.safetensors.index.fp16.json")


def test_all_overflowed_tensor_never_shows_zero_error(qtbot, window, tmp_path):
    """Reliability 17: a tensor whose values all overflowed reported max_rel_err 0."""
    path = tmp_path / "big.safetensors"
    save_arrays(path, [("x", F32, np.full(8, 1e6, np.float32)), ("y", F32, np.ones(2, np.float32))])
    open_and_wait(qtbot, window, path)
    with qtbot.waitSignal(window.cast_done, timeout=wait_ms(30_000)):
        window.start_cast(str(tmp_path / "out.safetensors"), target=DTYPES["F16"])
    rep = {r.name: r for r in window.cast_report.tensors}["x"]
    assert rep.overflow == 8 and rep.max_rel_err is None and not rep.lossless
    window.select_tensor("x")
    qtbot.waitUntil(lambda: "overflow" in window.details.field("Cast"), timeout=wait_ms(10_000))
    assert "every value overflowed" in window.details.field("Cast")
    assert " 0 " not in window.details.field("Cast").split("\n")[0]


def test_filter_escape_clears_and_an_empty_result_says_so(qtbot, window, tmp_path):
    path = tmp_path / "m.safetensors"
    save_arrays(path, [(f"layer.{i}.w", F64, np.ones(2)) for i in range(3)])
    open_and_wait(qtbot, window, path)
    page = window.tensor_page
    page.filter_edit.setText("no-such-tensor")
    page.apply_filter()
    assert page.count_label.text() == "no tensor matches"
    assert window.current_tensor() is None  # the details pane shows no hidden tensor
    assert window.details.heading.text() == "No tensor selected"
    page.filter_edit.setFocus()
    qtbot.keyClick(page.filter_edit, Qt.Key.Key_Escape)
    assert page.filter_edit.text() == "" and page.count_label.text() == "3 tensors"
    assert window.current_tensor() is not None
    assert "any of these words" in page.filter_edit.placeholderText()


def test_before_after_of_extreme_values_draws():
    """The before/after histogram built its own edges and broke on ±1e308 (reliability 16)."""
    from inspector.gui.precision import before_after

    before = np.array([1e308, -1e308, 1.0])
    ba = before_after("x", before, before.copy())
    assert ba.before.sum() == ba.after.sum() == 3 and np.all(np.isfinite(ba.edges))
    ba = before_after("x", before, np.array([np.inf, -np.inf, 1.0]))
    assert ba.before.sum() == 3 and ba.after.sum() == 1
    assert ba.after_nonfinite == {"+inf": 1, "-inf": 1}
