"""The Values and Heatmap tabs' controller, with no MainWindow: a tab is read only while it is
open and once per tensor, an empty tensor and a failed read say so, no selection empties both,
and the heatmap's caption says what its cells hold."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.heatmap import Heatmap
from inspector.core.save.writer import save_arrays
from inspector.gui.values_controller import heatmap_title
from tests.gui.waits import wait_ms

F32 = DTYPES["F32"]


@pytest.fixture
def tabs(qtbot, controller_parts):
    """(session, window controller, values controller, details pane)."""
    from inspector.gui.values_controller import ValuesController

    session, window, _cast, page = controller_parts
    values = ValuesController(session, window.runner, page, parent=page)
    return session, window, values, page.details


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    path = tmp_path / "small.safetensors"
    save_arrays(
        path,
        [
            ("a", F32, rng.standard_normal((10, 12)).astype(np.float32)),
            ("b", F32, rng.standard_normal((5, 7)).astype(np.float32)),
            ("empty", F32, np.zeros((0, 4), np.float32)),
            ("one", F32, np.array([2.5], np.float32)),
        ],
    )
    return path


def _open(qtbot, window, path: Path) -> None:
    with qtbot.waitSignal(window.loaded, timeout=wait_ms(20_000)):
        window.open_path(str(path))


def _count(signal) -> list[str]:
    seen: list[str] = []
    signal.connect(seen.append)
    return seen


def test_a_tab_is_read_only_while_open_and_once_per_tensor(qtbot, tabs, small_file: Path):
    session, window, values, pane = tabs
    _open(qtbot, window, small_file)
    got_values, got_heatmaps = _count(values.values_ready), _count(values.heatmap_ready)
    ckpt = session.checkpoint
    pane.view_tabs.setCurrentIndex(0)  # the histograms: neither tab asks
    session.select(ckpt["b"])
    assert pane.heatmap_view.caption.text() == "computing…"
    qtbot.wait(300)
    assert got_values == [] and got_heatmaps == []
    with qtbot.waitSignal(values.values_ready, timeout=wait_ms(20_000)):
        pane.view_tabs.setCurrentWidget(pane.values_view)
    assert pane.values_view.caption.text() == "rows 0–4 of 5, columns 0–6 of 7"
    assert np.array_equal(pane.values_view.model.slice.values, ckpt.view(ckpt["b"]))
    with qtbot.waitSignal(values.heatmap_ready, timeout=wait_ms(20_000)):
        pane.view_tabs.setCurrentWidget(pane.heatmap_view)
    assert pane.heatmap_view.caption.text() == "5 × 7 values"
    # back to a tab this tensor was read for: not read again
    pane.view_tabs.setCurrentWidget(pane.values_view)
    pane.view_tabs.setCurrentWidget(pane.heatmap_view)
    qtbot.wait(300)
    assert got_values == ["b"] and got_heatmaps == ["b"]
    # a new tensor while the heatmap is open: the heatmap is read at once
    with qtbot.waitSignal(values.heatmap_ready, timeout=wait_ms(20_000)):
        session.select(ckpt["a"])
    assert pane.heatmap_view.caption.text() == "10 × 12 values"
    assert np.array_equal(pane.heatmap_view.plot.heatmap.values, ckpt.view(ckpt["a"]))
    assert got_values == ["b"]


def test_an_empty_tensor_says_no_values_in_both_tabs(qtbot, tabs, small_file: Path):
    session, window, values, pane = tabs
    _open(qtbot, window, small_file)
    pane.view_tabs.setCurrentWidget(pane.values_view)
    with qtbot.waitSignal(values.values_ready, timeout=wait_ms(20_000)):
        session.select(session.checkpoint["empty"])
    assert pane.values_view.caption.text() == "No values"
    assert pane.values_view.model.rowCount() == 0
    with qtbot.waitSignal(values.heatmap_ready, timeout=wait_ms(20_000)):
        pane.view_tabs.setCurrentWidget(pane.heatmap_view)
    assert pane.heatmap_view.caption.text() == "No values"
    assert pane.heatmap_view.plot.heatmap is None


def test_no_selection_empties_both_tabs_and_a_mode_change_reads_nothing(
    qtbot, tabs, small_file: Path
):
    session, window, values, pane = tabs
    _open(qtbot, window, small_file)
    pane.view_tabs.setCurrentWidget(pane.heatmap_view)
    with qtbot.waitSignal(values.heatmap_ready, timeout=wait_ms(20_000)):
        session.select(session.checkpoint["a"])
    session.select(None)
    assert pane.heatmap_view.caption.text() == "" and pane.heatmap_view.plot.heatmap is None
    assert pane.values_view.caption.text() == "" and pane.values_view.lead_spins == []
    got = _count(values.heatmap_ready)
    pane.heatmap_view.set_mode("mean")
    pane.view_tabs.setCurrentWidget(pane.values_view)
    qtbot.wait(300)
    assert got == [] and pane.heatmap_view.caption.text() == ""
    # the mode of the selected tensor's heatmap changes: computing, then drawn again
    pane.view_tabs.setCurrentWidget(pane.heatmap_view)
    session.select(session.checkpoint["b"])
    qtbot.waitUntil(lambda: got == ["b"], timeout=wait_ms(20_000))
    with qtbot.waitSignal(values.heatmap_ready, timeout=wait_ms(20_000)):
        pane.heatmap_view.set_mode("peak")
        assert pane.heatmap_view.caption.text() == "computing…"
    assert pane.heatmap_view.plot.heatmap.mode == "peak"


def test_a_file_truncated_in_place_says_why_values_and_heatmap_are_unavailable(
    qtbot, tabs, small_file: Path
):
    session, window, values, pane = tabs
    _open(qtbot, window, small_file)
    os.truncate(small_file, 100)
    why = f"{small_file}: file was truncated on disk since it was opened; reopen it"
    pane.view_tabs.setCurrentWidget(pane.values_view)
    with qtbot.waitSignal(values.values_ready, timeout=wait_ms(20_000)):
        session.select(session.checkpoint["b"])
    assert pane.values_view.caption.text() == f"Values unavailable: {why}"
    with qtbot.waitSignal(values.heatmap_ready, timeout=wait_ms(20_000)):
        pane.view_tabs.setCurrentWidget(pane.heatmap_view)
    assert pane.heatmap_view.caption.text() == f"Heatmap unavailable: {why}"


def _heatmap(values: np.ndarray, rows: int, cols: int, nonfinite: int = 0) -> Heatmap:
    bad = np.zeros(values.shape, np.int64)
    bad.flat[0] = nonfinite
    return Heatmap("w", rows, cols, values, bad, "peak")


def test_the_heatmap_caption_says_what_the_cells_hold():
    one_each = _heatmap(np.ones((3, 4)), 3, 4)
    assert heatmap_title(one_each) == "3 × 4 values"
    assert heatmap_title(one_each, weight=object()) == "3 × 4 values, dequantized"
    assert heatmap_title(_heatmap(np.ones((2, 2)), 2000, 3000)) == ("2,000 × 3,000 in 2 × 2 cells")
    assert heatmap_title(_heatmap(np.ones((3, 2000)), 3, 2000)) == "3 × 2,000 values"
    # a few outliers: colours stop at the quantile, the caption gives the largest
    cells = np.ones((20, 20))
    cells[0, 0] = 100.0
    assert heatmap_title(_heatmap(cells, 20, 20)) == (
        "20 × 20 values · colours saturate beyond ±1 (a few cells reach 100)"
    )
    with_nan = np.ones((2, 2))
    with_nan[1, 1] = np.nan
    assert heatmap_title(_heatmap(with_nan, 4000, 4000, nonfinite=1234)) == (
        "4,000 × 4,000 in 2 × 2 cells · 1,234 NaN or inf not drawn (grey: a block of nothing else)"
    )


def test_what_the_tabs_say_is_chinese_in_zh_cn(qtbot, zh_cn, tabs, small_file: Path):
    """Each message in zh_CN: a string looked up under another context stays English."""
    session, window, values, pane = tabs
    _open(qtbot, window, small_file)
    pane.view_tabs.setCurrentIndex(0)
    session.select(session.checkpoint["a"])
    assert pane.heatmap_view.caption.text() == "计算中…"
    pane.view_tabs.setCurrentWidget(pane.values_view)
    with qtbot.waitSignal(
        values.values_ready, timeout=wait_ms(20_000), check_params_cb="empty".__eq__
    ):
        session.select(session.checkpoint["empty"])
    assert pane.values_view.caption.text() == "没有数值"
    with qtbot.waitSignal(
        values.heatmap_ready, timeout=wait_ms(20_000), check_params_cb="empty".__eq__
    ):
        pane.view_tabs.setCurrentWidget(pane.heatmap_view)
    assert pane.heatmap_view.caption.text() == "没有数值"
    with qtbot.waitSignal(values.heatmap_ready, timeout=wait_ms(20_000)):
        pane.heatmap_view.set_mode("mean")
        assert pane.heatmap_view.caption.text() == "计算中…"
    os.truncate(small_file, 100)
    why = f"{small_file}: file was truncated on disk since it was opened; reopen it"
    with qtbot.waitSignal(
        values.heatmap_ready, timeout=wait_ms(20_000), check_params_cb="b".__eq__
    ):
        session.select(session.checkpoint["b"])
    assert pane.heatmap_view.caption.text() == f"热力图不可用：{why}"
    with qtbot.waitSignal(values.values_ready, timeout=wait_ms(20_000), check_params_cb="b".__eq__):
        pane.view_tabs.setCurrentWidget(pane.values_view)
    assert pane.values_view.caption.text() == f"数值不可用：{why}"
    cells = np.ones((20, 20))
    cells[0, 0], cells[1, 1] = 100.0, np.nan
    assert heatmap_title(_heatmap(cells, 20, 20, nonfinite=3), weight=object()) == (
        "20 × 20 个值，已反量化 · 超出 ±1 的颜色饱和（少数格子达到 100） · 3 个 NaN 或 inf "
        "未绘制（灰色：区块中只有这些值）"
    )
    assert heatmap_title(_heatmap(np.ones((2, 2)), 2000, 3000)) == (
        "2,000 × 3,000，分为 2 × 2 个格子"
    )


def test_a_single_value_is_drawn_and_no_selection_reads_nothing(qtbot, tabs, small_file: Path):
    session, window, values, pane = tabs
    _open(qtbot, window, small_file)
    pane.view_tabs.setCurrentWidget(pane.heatmap_view)
    with qtbot.waitSignal(
        values.heatmap_ready, timeout=wait_ms(20_000), check_params_cb="one".__eq__
    ):
        session.select(session.checkpoint["one"])
    assert pane.heatmap_view.caption.text() == "1 × 1 values"
    assert pane.heatmap_view.plot.heatmap.values.tolist() == [[2.5]]
    session.select(None)
    asked = _count(values.values_ready)
    pane.view_tabs.setCurrentWidget(pane.values_view)
    pane.values_view.set_window((), 0, 0)  # the view asks; nothing is selected
    qtbot.wait(300)
    assert asked == [] and pane.values_view.caption.text() == ""


def test_a_quantized_weights_values_and_heatmap_are_dequantized(qtbot, tabs, tmp_path: Path):
    from tests.quant_folders import deepseek_folder

    session, window, values, pane = tabs
    made = deepseek_folder(tmp_path / "q")
    _open(qtbot, window, tmp_path / "q")
    name = "model.layers.0.mlp.up_proj.weight"
    want = made["codes"].astype(np.float32) * np.repeat(np.repeat(made["scale"], 128, 0), 128, 1)
    pane.view_tabs.setCurrentWidget(pane.values_view)
    session.select(None)
    with qtbot.waitSignal(
        values.values_ready, timeout=wait_ms(20_000), check_params_cb=name.__eq__
    ):
        session.select(session.checkpoint[name])
    assert pane.values_view.caption.text().endswith(" · dequantized values")
    assert np.array_equal(pane.values_view.model.slice.values, want[:64, :64])
    with qtbot.waitSignal(
        values.heatmap_ready, timeout=wait_ms(20_000), check_params_cb=name.__eq__
    ):
        pane.view_tabs.setCurrentWidget(pane.heatmap_view)
    rows, cols = want.shape
    assert pane.heatmap_view.caption.text().startswith(f"{rows} × {cols}")
    assert ", dequantized" in pane.heatmap_view.caption.text()
    assert pane.heatmap_view.plot.heatmap.dequantized


def test_a_packed_weights_window_moves_over_its_logical_columns(qtbot, tabs, tmp_path: Path):
    """int4 codes packed eight to an I32: 32 stored columns hold 256 weights a row, and the
    window can move over all 256."""
    import ml_dtypes

    from tests.quant_folders import BF16, I32, folder

    session, window, values, pane = tabs
    qc = {"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {
        "g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
                                                 "strategy": "group", "group_size": 32}}}}  # fmt: skip
    rng = np.random.default_rng(4)
    folder(
        tmp_path / "q",
        [
            ("m.weight_packed", I32, rng.integers(0, 2**31, (8, 32), dtype=np.int32)),
            ("m.weight_scale", BF16, np.ones((8, 8), ml_dtypes.bfloat16)),
            ("m.weight_shape", DTYPES["I64"], np.array([8, 256], np.int64)),
        ],
        qc,
    )
    _open(qtbot, window, tmp_path / "q")
    pane.view_tabs.setCurrentWidget(pane.values_view)
    session.select(None)
    with qtbot.waitSignal(values.values_ready, timeout=wait_ms(20_000)):
        session.select(session.checkpoint["m.weight_packed"])
    view = pane.values_view
    assert view.col_spin.maximum() == 255 and view.row_spin.maximum() == 7
    with qtbot.waitSignal(values.values_ready, timeout=wait_ms(20_000)):
        view.set_window((), 0, 192)
    assert view.caption.text() == ("rows 0–7 of 8, columns 192–255 of 256 · dequantized values")
