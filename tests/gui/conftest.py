"""Fixtures for the window tests: real checkpoints written in tmp_path by our numpy writer, so\nthe window tests run without torch (tests where torch is the point import it themselves)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np

from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays

F64_NAMES = [
    "encoder.layer.1.attention.self.query.weight",
    "encoder.layer.1.attention.self.key.weight",
    "encoder.layer.1.attention.self.value.weight",
    "encoder.rotary.inv_freq",
]
BF16_NAMES = ["classifier.weight"]
INT_NAMES = ["embeddings.position_ids"]
F32, F64, BF16, I64 = DTYPES["F32"], DTYPES["F64"], DTYPES["BF16"], DTYPES["I64"]


def small_model() -> list[tuple[str, object, np.ndarray]]:
    """(name, dtype, values): mostly F32, an F64 layer (numpy math), a BF16 head, int64 ids."""
    rng = np.random.default_rng(1234)

    def w(*shape: int, dtype=F32) -> tuple[object, np.ndarray]:
        return dtype, (rng.standard_normal(shape) * 0.02).astype(dtype.numpy)

    t: list[tuple[str, object, np.ndarray]] = [
        ("embeddings.word_embeddings.weight", *w(100, 16)),
        ("embeddings.position_ids", I64, np.arange(32, dtype=np.int64)[None, :]),
        ("embeddings.LayerNorm.weight", F32, np.ones(16, np.float32)),
        ("embeddings.LayerNorm.bias", F32, np.zeros(16, np.float32)),
    ]
    for i in range(2):
        p = f"encoder.layer.{i}."
        dt = F64 if i == 1 else F32
        for part in ("query", "key", "value"):
            t.append((p + f"attention.self.{part}.weight", *w(16, 16, dtype=dt)))
            t.append((p + f"attention.self.{part}.bias", F32, np.zeros(16, np.float32)))
        t.append((p + "output.dense.weight", *w(16, 32)))
    inv_freq = 1.0 / (10000.0 ** (np.arange(0, 16, 2, dtype=np.float64) / 16))
    t.append(("encoder.rotary.inv_freq", F64, inv_freq))
    t.append(("classifier.weight", *w(3, 16, dtype=BF16)))
    t.append(("classifier.bias", F32, np.zeros(3, np.float32)))
    return t


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "model.safetensors"
    save_arrays(path, small_model(), {"format": "pt"})
    return path


@pytest.fixture
def f32_file(tmp_path: Path) -> Path:
    """The same model as PyTorch would hold it after load_state_dict into an F32 module."""
    path = tmp_path / "reference" / "model.f32.safetensors"
    path.parent.mkdir()
    f32 = [(n, F32, v.astype(np.float32)) if d.is_float else (n, d, v) for n, d, v in small_model()]
    save_arrays(path, f32)
    return path


@pytest.fixture
def big_file(tmp_path: Path) -> Path:
    """Large enough (~64 MB F64) that a cast yields many progress steps, so cancel can land."""
    path = tmp_path / "big.safetensors"
    rng = np.random.default_rng(7)
    save_arrays(
        path, [(f"layer.{i}.weight", F64, rng.standard_normal((1024, 1024))) for i in range(8)]
    )
    return path


@pytest.fixture
def settings(tmp_path: Path):
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, settings):
    from inspector.gui.main_window import MainWindow

    win = MainWindow(settings=settings)  # a fresh settings file: F32 by default
    qtbot.addWidget(win)
    win.resize(1200, 760)
    win.show()
    yield win
    win.close()


@pytest.fixture
def loaded(qtbot, window, model_file):
    """The window with the small model open and the first differing tensor's stats drawn."""
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        window.open_path(str(model_file))
    return window


@pytest.fixture
def controller_parts(qtbot, settings):
    """(session, window controller, cast controller, page) around a bare QMainWindow that
    only hosts the widgets: the controllers with no MainWindow."""
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


@pytest.fixture
def zh_cn():
    """The window's strings in Chinese for the test (the translator removed after)."""
    from PySide6.QtWidgets import QApplication

    from inspector.gui.i18n import install_translator, qm_path

    if not qm_path("zh_CN").is_file():
        pytest.fail("the zh_CN translation is not built: run `make` (pyside6-lrelease)")
    app = QApplication.instance()
    assert install_translator(app, "zh_CN") == "zh_CN"
    yield
    for t in app.property("inspector_translators") or []:
        app.removeTranslator(t)
