"""The window beside the largest relative error shows the typical one, and marks a largest error
of 1 that an underflow made (issue 29 item 15): a randn × 0.02 F32 file cast to F16, where one
tensor of six has a value below F16's smallest subnormal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays
from inspector.gui.tensor_columns import Col

UNDERFLOWED = 4  # with this seed, the only one of the six with a value that becomes 0


@pytest.fixture
def randn(tmp_path) -> Path:
    rng = np.random.default_rng(3)
    path = tmp_path / "randn.safetensors"
    save_arrays(
        path,
        [
            (f"w.{i}", DTYPES["F32"], (rng.standard_normal(500_000) * 0.02).astype(np.float32))
            for i in range(6)
        ],
    )
    return path


def test_typical_error_and_underflow_in_the_window(qtbot, window, randn, tmp_path):
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        window.open_path(str(randn))
    with qtbot.waitSignal(window.cast_done, timeout=30_000):
        window.start_cast(str(tmp_path / "f16.safetensors"), DTYPES["F16"])
    report = {r.name: r for r in window.session.cast.report.tensors}
    assert [n for n, r in report.items() if r.max_rel_err == 1] == [f"w.{UNDERFLOWED}"]
    plot = window.precision_plot
    x, y = plot.typical_item.getData()  # the plot is in log10 (log mode)
    assert list(x) == list(range(6))
    assert all(1.7e-4 < 10**v < 1.9e-4 for v in y)  # F16's rounding, not the 1 of the max
    assert np.allclose(10**y, [report[f"w.{i}"].mean_rel_err for i in range(6)], rtol=1e-12)
    ux, uy = plot.underflow_item.getData()
    assert (list(ux), list(uy)) == ([UNDERFLOWED], [0.0])  # 10**0: its own symbol
    lx, _ = plot.lossy_item.getData()
    assert UNDERFLOWED not in lx and len(lx) == 5
    ox, _ = plot.overflow_item.getData()
    assert ox is None or len(ox) == 0
    assert plot.getPlotItem().getAxis("left").labelText == "max ●, mean ■"
    legend = window.tensor_page.plots_tabs.precision_panel.caption.text()
    assert "typical (mean)" in legend and "max 1 from an underflow" in legend
    # the table: the underflow named in the cell, both figures in its tooltip
    model = window.model
    row = model.row_of(f"w.{UNDERFLOWED}")
    n = report[f"w.{UNDERFLOWED}"].underflow
    assert model.index(row, Col.CAST_ERR).data() == f"{n} underflow"
    tip = model.index(row, Col.CAST_ERR).data(3)
    assert "largest 1, typical (mean) 0.00018" in tip and f"underflow {n}" in tip
    # the details pane
    with qtbot.waitSignal(window.details_ready, timeout=20_000):
        window.select_tensor("w.0")
    assert "typical (mean) 0.00018" in window.details.field("Cast")


def test_the_tensor_axis_ticks_whole_numbers_and_the_band_lines_say_what_they_bound(window):
    from inspector.gui.plots import IntegerAxis

    axis = window.precision_plot.getPlotItem().getAxis("bottom")
    assert isinstance(axis, IntegerAxis)
    for lo, hi, size in ((-0.5, 15.5, 600), (-0.3, 2.3, 600), (0.2, 1.8, 400)):
        values = [v for _, level in axis.tickValues(lo, hi, size) for v in level]
        assert values and all(float(v).is_integer() for v in values), (lo, hi, values)
    plot = window.precision_plot
    plot.set_values(["a", "b", "c"], [float("inf"), 1e-3, 0.0], "t")
    assert plot.top_line.isVisible() and plot.bottom_line.isVisible()
    assert plot.top_line.label.toPlainText() == "↑ overflow, inf or NaN"
    assert plot.bottom_line.label.toPlainText() == "↓ exact (0)"
