"""The details pane's Values and Heatmap tabs: the numbers in the grid are the tensor's, the
window moves, the heatmap's cells are the blocks' values, and a stale answer is dropped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays
from inspector.gui.value_grid import ValueGridModel, format_value
from inspector.gui.values_controller import HEATMAP_SIDE

F32, BF16, I64 = DTYPES["F32"], DTYPES["BF16"], DTYPES["I64"]


def _blocks() -> np.ndarray:
    """1024 × 1024: 4 × 4 blocks of constants −7.5 … 7.5."""
    a = np.empty((1024, 1024), np.float32)
    for i in range(4):
        for j in range(4):
            a[i * 256 : (i + 1) * 256, j * 256 : (j + 1) * 256] = i * 4 + j - 7.5
    return a


@pytest.fixture
def values_file(tmp_path) -> tuple[Path, dict[str, np.ndarray]]:
    rng = np.random.default_rng(5)
    arrays = {
        "m": rng.standard_normal((100, 90)).astype(np.float32),
        "b": rng.standard_normal((70, 80)).astype(BF16.numpy),
        "cube": np.arange(3 * 5 * 6, dtype=np.int64).reshape(3, 5, 6),
        "blocks": _blocks(),
    }
    dtypes = {"m": F32, "b": BF16, "cube": I64, "blocks": F32}
    path = tmp_path / "values.safetensors"
    save_arrays(path, [(n, dtypes[n], a) for n, a in arrays.items()])
    return path, arrays


def _open(qtbot, window, path):
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        window.open_path(str(path))
    return window.tensor_page.details


def _show(qtbot, window, details, name, tab):
    vc = window.values_controller
    signal = vc.values_ready if tab is details.values_view else vc.heatmap_ready
    with qtbot.waitSignal(signal, timeout=20_000, check_params_cb=lambda n: n == name):
        if window.session.current is None or window.session.current.name != name:
            window.select_tensor(name)
        details.view_tabs.setCurrentWidget(tab)


def _cells(model, rows, cols):
    return [[model.index(r, c).data() for c in range(cols)] for r in range(rows)]


def test_the_grid_shows_the_tensors_values_and_moves(qtbot, window, values_file):
    path, arrays = values_file
    details = _open(qtbot, window, path)
    view = details.values_view
    _show(qtbot, window, details, "m", view)
    model = view.model
    assert (model.rowCount(), model.columnCount()) == (64, 64)
    assert _cells(model, 3, 3) == [
        [format_value(float(v)) for v in row] for row in arrays["m"][:3, :3]
    ]
    assert np.array_equal(model.slice.values, arrays["m"][:64, :64].astype(np.float64))
    assert model.headerData(0, Qt.Orientation.Vertical) == "0"
    with qtbot.waitSignal(window.values_controller.values_ready, timeout=20_000):
        view.set_window((), 50, 40)
    assert (model.rowCount(), model.columnCount()) == (50, 50)  # the last rows and columns
    assert np.array_equal(model.slice.values, arrays["m"][50:, 40:].astype(np.float64))
    assert model.headerData(0, Qt.Orientation.Vertical) == "50"
    assert model.headerData(2, Qt.Orientation.Horizontal) == "42"
    assert "rows 50–99 of 100, columns 40–89 of 90" in view.caption.text()
    # BF16 widened exactly; a new tensor starts at its first row again
    _show(qtbot, window, details, "b", view)
    assert view.window() == ((), 0, 0)
    assert np.array_equal(model.slice.values, arrays["b"][:64, :64].astype(np.float64))


def test_a_3d_tensor_has_a_spin_box_for_its_leading_index(qtbot, window, values_file):
    path, arrays = values_file
    details = _open(qtbot, window, path)
    view = details.values_view
    _show(qtbot, window, details, "cube", view)
    assert len(view.lead_spins) == 1 and view.lead_spins[0].maximum() == 2
    assert _cells(view.model, 1, 6) == [[str(v) for v in arrays["cube"][0, 0]]]
    with qtbot.waitSignal(window.values_controller.values_ready, timeout=20_000):
        view.lead_spins[0].setValue(2)
    assert np.array_equal(view.model.slice.values, arrays["cube"][2])


def test_value_grid_model_is_a_sound_model(qtmodeltester, values_file):
    from inspector.core.opening import open_checkpoint
    from inspector.core.value_views import value_slice

    path, _ = values_file
    model = ValueGridModel()
    qtmodeltester.check(model)
    with open_checkpoint(path) as ckpt:
        model.set_slice(value_slice(ckpt, ckpt["m"], (), 0, 0, 8, 8))
    qtmodeltester.check(model)


def test_the_heatmap_of_constant_blocks(qtbot, window, values_file):
    path, _ = values_file
    details = _open(qtbot, window, path)
    plot = details.heatmap_view
    _show(qtbot, window, details, "blocks", plot)
    h = plot.plot.heatmap
    assert h is not None and h.values.shape == (HEATMAP_SIDE, HEATMAP_SIDE)
    cells = HEATMAP_SIDE // 4
    want = np.kron(np.arange(16).reshape(4, 4) - 7.5, np.ones((cells, cells)))
    assert np.array_equal(h.values, want)
    image = plot.plot.image.image
    assert image.shape == (HEATMAP_SIDE, HEATMAP_SIDE) and image[0, -1] == -4.5
    assert plot.plot.bar.levels() == (-7.5, 7.5)  # centred at 0
    assert "1,024 × 1,024 in 256 × 256 cells" in plot.caption.text()
    describe = plot.plot.describe
    assert describe(1000.5, 10.2) == "rows 8–11, columns 1,000–1,003: largest |x| is -4.5"
    assert describe(2000, 0) is None
    with qtbot.waitSignal(window.values_controller.heatmap_ready, timeout=20_000):
        plot.set_mode("mean")
    assert plot.plot.heatmap.mode == "mean" and np.array_equal(plot.plot.heatmap.values, want)
    assert describe(1000.5, 10.2) == "rows 8–11, columns 1,000–1,003: mean -4.5"


def test_a_new_selection_drops_the_stale_heatmap(qtbot, window, values_file):
    path, _ = values_file
    details = _open(qtbot, window, path)
    plot = details.heatmap_view
    drawn: list[str] = []
    real = plot.set_heatmap
    plot.set_heatmap = lambda h, caption: (drawn.append(h.name), real(h, caption))  # type: ignore[method-assign]
    ready: list[str] = []
    window.values_controller.heatmap_ready.connect(ready.append)
    details.view_tabs.setCurrentWidget(plot)
    window.select_tensor("blocks")  # its heatmap is asked for, then made stale at once
    with qtbot.waitSignal(
        window.values_controller.heatmap_ready, timeout=20_000, check_params_cb=lambda n: n == "m"
    ):
        window.select_tensor("m")
    assert window.runner.workers.wait(10_000)  # every worker done: a late answer has come
    qtbot.wait(100)
    assert drawn == ["m"] and ready == ["m"]
    assert plot.plot.heatmap is not None and plot.plot.heatmap.name == "m"
