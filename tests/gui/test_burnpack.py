"""A Burnpack file in the window: its param ids and burn dtype names, its metadata and
scalars, burn-store's loading line, and a cast that proposes a .bpk."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QApplication

from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.gui.cast_dialog import proposed_output
from tests.burnpack_files import BurnTensor, burnpack_bytes, plain


def _bpk(tmp_path):
    path = tmp_path / "model.bpk"
    tensors = [
        plain("fc.weight", np.linspace(-1, 1, 12).reshape(3, 4), param_id=77),
        BurnTensor("fc.bias", "Flex32", [4], np.ones(4, np.float32).tobytes(), 78),
    ]
    import cbor2

    doc = {
        "tensors": {
            "fc.bias": {
                "dtype": "Flex32",
                "shape": [4],
                "data_offsets": [256, 272],
                "param_id": 78,
            },
            "fc.weight": {"dtype": "F64", "shape": [3, 4], "data_offsets": [0, 96], "param_id": 77},
        },
        "metadata": {"format": "burnpack", "producer": "burn"},
        "scalars": {"epoch": {"UInt": 3}},
    }
    path.write_bytes(burnpack_bytes(tensors, raw_metadata=cbor2.dumps(doc)))
    return path


def test_a_burnpack_file_in_the_window(qtbot, window, tmp_path):
    path = _bpk(tmp_path)
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        window.open_path(str(path))
    assert window.summary_label.text().startswith("⚠ 1 of 2 tensors differ from F32")
    window.tensor_page.select_row_of("fc.weight")
    d = window.details
    assert d.field("Param ID") == "77"
    assert d.field("DType").startswith("F64 — ")
    window.tensor_page.select_row_of("fc.bias")
    assert d.field("Param ID") == "78"
    assert d.field("DType").startswith("F32 (burn: Flex32) — ")
    assert window.hint.torch.isHidden()  # PyTorch does not read Burnpack
    window.hint.copy_button.click()
    assert QApplication.clipboard().text() == (
        'BurnpackStore::from_file("model.bpk").with_from_adapter(FloatCastAdapter::to(DType::F32))'
    )
    tabs = window.tensor_page.plots_tabs
    panel = tabs.metadata_panel
    assert tabs.isTabVisible(tabs.indexOf(panel))
    tree = panel.tree
    rows = {tree.topLevelItem(i).text(0): tree.topLevelItem(i).text(1) for i in range(3)}
    assert rows == {"format": "burnpack", "producer": "burn", "epoch (scalar)": "3"}
    assert "Burnpack" in panel.caption.text()
    with open_checkpoint(path) as ckpt:
        assert proposed_output(ckpt, DTYPES["F32"]) == str(tmp_path / "model.F32.bpk")


def test_burn_quantized_tensors_in_the_window(qtbot, window):
    """Each QFloat tensor is a quantized weight: its value type, its scheme in the status, the
    histogram of the values burn dequantizes it to."""
    from pathlib import Path

    path = Path(__file__).parents[1] / "data" / "burn" / "qfloat.bpk"
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        window.open_path(str(path))
    assert "12 quantized (burn QFloat Q2S×1, Q4F×1, Q4S×1, Q8F×2, Q8S×7)" in (
        window.summary_label.text()
    )
    with qtbot.waitSignal(window.details_ready, timeout=20_000):
        window.tensor_page.select_row_of("q8s_block32")
    dtype = window.details.field("DType")
    assert dtype.startswith("Q8S — quantized") and "QFloat(Q8S, block 32), 9 bits/weight" in dtype
