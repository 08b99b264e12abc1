"""The window's controllers work from the session, the runner and the views they are given, with
no MainWindow: built here around a bare QMainWindow that only hosts the widgets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from safetensors.numpy import load_file

from inspector.core.dtypes import DTYPES
from tests.gui.waits import wait_ms


def test_opening_through_the_controller_alone_fills_the_page_and_asks_the_window_to_show_it(
    qtbot, controller_parts, model_file: Path
):
    session, window, _cast, page = controller_parts
    shown: list[str] = []
    window.shown.connect(shown.append)
    with qtbot.waitSignal(window.loaded, timeout=wait_ms(20_000)) as got:
        window.open_path(str(model_file))
    assert got.args == [str(model_file)]
    assert shown == [str(model_file)]
    assert session.checkpoint is not None
    assert page.model.rowCount() == len(session.checkpoint.tensors) == 21


def test_a_cast_to_another_dtype_asks_for_that_target_and_offers_to_open_the_output(
    qtbot, controller_parts, model_file: Path, tmp_path: Path
):
    session, window, cast, page = controller_parts
    with qtbot.waitSignal(window.loaded, timeout=wait_ms(20_000)):
        window.open_path(str(model_file))
    written: list[str] = []
    cast.target_written.connect(written.append)
    out = tmp_path / "out.safetensors"
    with qtbot.waitSignal(cast.cast_done, timeout=wait_ms(30_000)):
        cast.start_cast(str(out), DTYPES["F16"], ())
    assert written == ["F16"]  # the window sets its chooser to what was written
    assert load_file(out)["classifier.weight"].dtype == np.float16
    assert session.cast is not None and session.cast.output_path == str(out)
    requested: list[str] = []
    cast.open_requested.connect(requested.append)
    window.views.message_bar.action.click()
    assert requested == [str(out)]
