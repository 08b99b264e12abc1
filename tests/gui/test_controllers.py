"""The window's controllers work from the session, the runner and the views they are given, with
no MainWindow: built here around a bare QMainWindow that only hosts the widgets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from inspector.core.dtypes import DTYPES


@pytest.fixture
def parts(qtbot, settings):
    from PySide6.QtWidgets import QMainWindow

    from inspector.gui.cast_controller import CastController
    from inspector.gui.controller import WindowController
    from inspector.gui.job_bar import JobBar
    from inspector.gui.job_runner import JobRunner
    from inspector.gui.message_bar import MessageBar
    from inspector.gui.tensor_page import TensorPage
    from inspector.gui.window_actions import WindowActions
    from inspector.gui.window_views import WindowViews
    from inspector.session import Session

    host = QMainWindow()  # not our window: it has none of MainWindow's methods or signals
    qtbot.addWidget(host)
    actions = WindowActions(host)
    box = actions.build_toolbar(host, "F32")
    page, bar = TensorPage(), MessageBar()
    host.setCentralWidget(page)
    session, runner = Session(DTYPES["F32"]), JobRunner(host)
    views = WindowViews(
        page=page,
        job_bar=JobBar(host.statusBar(), runner.cancel),
        message_bar=bar,
        actions=actions,
        target_box=box,
        status_bar=host.statusBar(),
        settings=settings,
        dialog_parent=host,
    )
    window = WindowController(session, runner, views, parent=host)
    cast = CastController(session, runner, views, parent=host)
    yield session, window, cast, page
    runner.shutdown(10_000)
    session.close()


def test_opening_through_the_controller_alone_fills_the_page_and_asks_the_window_to_show_it(
    qtbot, parts, model_file: Path
):
    session, window, _cast, page = parts
    shown: list[str] = []
    window.shown.connect(shown.append)
    with qtbot.waitSignal(window.loaded, timeout=20_000) as got:
        window.open_path(str(model_file))
    assert got.args == [str(model_file)]
    assert shown == [str(model_file)]
    assert session.checkpoint is not None
    assert page.model.rowCount() == len(session.checkpoint.tensors) == 21


def test_a_cast_to_another_dtype_asks_for_that_target_and_offers_to_open_the_output(
    qtbot, parts, model_file: Path, tmp_path: Path
):
    session, window, cast, page = parts
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(model_file))
    written: list[str] = []
    cast.target_written.connect(written.append)
    out = tmp_path / "out.safetensors"
    with qtbot.waitSignal(cast.cast_done, timeout=30_000):
        cast.start_cast(str(out), DTYPES["F16"], ())
    assert written == ["F16"]  # the window sets its chooser to what was written
    assert load_file(out)["classifier.weight"].dtype == np.float16
    assert session.cast is not None and session.cast.output_path == str(out)
    requested: list[str] = []
    cast.open_requested.connect(requested.append)
    window.views.message_bar.action.click()
    assert requested == [str(out)]
