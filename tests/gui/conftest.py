"""Fixtures for the window tests: real checkpoints written by safetensors.torch in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

torch = pytest.importorskip("torch")
from safetensors.torch import save_file  # noqa: E402

F64_NAMES = [
    "encoder.layer.1.attention.self.query.weight",
    "encoder.layer.1.attention.self.key.weight",
    "encoder.layer.1.attention.self.value.weight",
    "encoder.rotary.inv_freq",
]
BF16_NAMES = ["classifier.weight"]
INT_NAMES = ["embeddings.position_ids"]


def small_model() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(1234)

    def w(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return (torch.randn(*shape, generator=g, dtype=torch.float64) * 0.02).to(dtype)

    t: dict[str, torch.Tensor] = {
        "embeddings.word_embeddings.weight": w(100, 16),
        "embeddings.position_ids": torch.arange(32, dtype=torch.int64)[None, :],
        "embeddings.LayerNorm.weight": torch.ones(16),
        "embeddings.LayerNorm.bias": torch.zeros(16),
    }
    for i in range(2):
        p = f"encoder.layer.{i}."
        dt = torch.float64 if i == 1 else torch.float32
        for part in ("query", "key", "value"):
            t[p + f"attention.self.{part}.weight"] = w(16, 16, dtype=dt)
            t[p + f"attention.self.{part}.bias"] = torch.zeros(16)
        t[p + "output.dense.weight"] = w(16, 32)
    t["encoder.rotary.inv_freq"] = 1.0 / (
        10000.0 ** (torch.arange(0, 16, 2, dtype=torch.float64) / 16)
    )
    t["classifier.weight"] = w(3, 16, dtype=torch.bfloat16)
    t["classifier.bias"] = torch.zeros(3)
    return t


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "model.safetensors"
    save_file(small_model(), str(path), metadata={"format": "pt"})
    return path


@pytest.fixture
def f32_file(tmp_path: Path) -> Path:
    """The same model as PyTorch would hold it after load_state_dict into an F32 module."""
    path = tmp_path / "reference" / "model.f32.safetensors"
    path.parent.mkdir()
    sd = {k: (v.float() if v.is_floating_point() else v) for k, v in small_model().items()}
    save_file(sd, str(path))
    return path


@pytest.fixture
def big_file(tmp_path: Path) -> Path:
    """Large enough (~64 MB F64) that a cast yields many progress steps, so cancel can land."""
    path = tmp_path / "big.safetensors"
    g = torch.Generator().manual_seed(7)
    save_file(
        {
            f"layer.{i}.weight": torch.randn(1024, 1024, generator=g, dtype=torch.float64)
            for i in range(8)
        },
        str(path),
    )
    return path


@pytest.fixture
def settings(tmp_path: Path):
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, settings):
    from inspector.gui.main_window import MainWindow

    win = MainWindow(settings=settings, target="F32")
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
