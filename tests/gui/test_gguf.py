"""A GGUF file in the window: block types in the DType column, quantized rows, the key/values
in the Metadata tab, and Compare with the HF original under the mapped names."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from inspector.gui.tensor_columns import Col
from tests.gguf_files import Q, write_gguf


def test_a_gguf_file_in_the_window(qtbot, window, tmp_path):
    rng = np.random.default_rng(0)
    path = write_gguf(
        tmp_path / "m.gguf",
        {
            "token_embd.weight": (rng.standard_normal((64, 256)).astype(np.float32), None),
            "blk.0.ffn_up.weight": (rng.standard_normal((64, 256)).astype(np.float32), Q.Q8_0),
        },
        tokens=5000,
    )
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        window.open_path(str(path))
    m = window.model
    rows = {
        m.index(r, Col.NAME).data(Qt.ItemDataRole.DisplayRole): m.index(r, Col.DTYPE).data(
            Qt.ItemDataRole.DisplayRole
        )
        for r in range(m.rowCount())
    }
    assert rows == {"token_embd.weight": "F32", "blk.0.ffn_up.weight": "Q8_0"}
    assert "1 quantized (GGUF Q8_0×1)" in window.summary_label.text()
    panel = window.tensor_page.plots_tabs.metadata_panel
    assert "GGUF" in panel.caption.text() and "a cast does not carry them" in panel.caption.text()
    tree = panel.tree
    values = {tree.topLevelItem(i).text(0): tree.topLevelItem(i).text(1)
              for i in range(tree.topLevelItemCount())}  # fmt: skip
    assert values["general.architecture"] == "llama"
    assert values["tokenizer.ggml.tokens"] == "[5,000 × string]"


def test_the_details_name_the_block_type(qtbot, window, tmp_path):
    a = np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32)
    path = write_gguf(tmp_path / "m.gguf", {"blk.0.ffn_up.weight": (a, Q.Q8_0)})
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        window.open_path(str(path))
    window.tensor_page.select_row_of("blk.0.ffn_up.weight")
    assert window.details.field("DType").startswith("Q8_0 — ")
