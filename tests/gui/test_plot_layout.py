"""The plots read at 800×600 (issue 29 item 14): the value histogram's key has a row of its own
above the bars, not over the peak; the two plots of the details pane fit inside the window, neither clipped; the error
histogram's axis reads in decades (its "log10 …" axis title was cut off)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays


@pytest.fixture
def randn(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    path = tmp_path / "randn.safetensors"
    rows = [(f"model.layers.{i}.mlp.down_proj.weight", DTYPES["F32"], rng.standard_normal((200, 500)).astype(np.float32)) for i in range(4)]  # fmt: skip
    save_arrays(path, rows)
    return path


@pytest.mark.parametrize("size", [(800, 600), (1000, 700), (1280, 800)])
def test_details_plots_fit_and_the_key_stays_off_the_peak(qtbot, window, randn, tmp_path, size):
    window.resize(*size)
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        window.open_path(str(randn))
    with qtbot.waitSignal(window.cast_done, timeout=30_000):
        window.start_cast(str(tmp_path / "out.safetensors"), DTYPES["F16"])
    with qtbot.waitSignal(window.details_ready, timeout=20_000):
        window.select_tensor("model.layers.1.mlp.down_proj.weight")
    hist, err = window.details.histogram, window.details.error_plot
    qtbot.waitUntil(lambda: err.isVisible() and hist.mode == "before_after", timeout=10_000)
    qtbot.wait(50)
    # neither plot is cut by the window: each shows all of its height
    floor = window.statusBar().mapTo(window, window.statusBar().rect().topLeft()).y()
    for plot in (hist, err):
        assert plot.mapTo(window, plot.rect().bottomLeft()).y() < floor, plot
        assert plot.height() >= plot.minimumHeight()
    assert (
        hist.mapTo(window, hist.rect().bottomLeft()).y()
        < err.mapTo(window, err.rect().topLeft()).y()
    )
    # the key has a row of its own above the bars, inside the plot's width
    key = hist._legend.sceneBoundingRect()
    data = hist.getPlotItem().getViewBox().sceneBoundingRect()
    assert hist._legend.isVisible() and key.bottom() <= data.top()
    assert key.left() >= 0 and key.right() <= hist.width()
    # the error axis: decades as tick labels, no axis title to cut off
    axis = err.getPlotItem().getAxis("bottom")
    assert not axis.label.isVisible() or not axis.labelText
    labels = [text for level in axis._tickLevels for _, text in level if text]
    assert labels and all(t == "1" or t.startswith("10") for t in labels)
