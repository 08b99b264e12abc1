"""The window on a quantized model folder: codes and scales are "quantized", not "≠ BF16"; the
summary counts quantized weights; the cast dialog dequantizes (or says why it cannot); the
details pane shows the dequantized values; Compare gives the precision the quantization lost."""

from __future__ import annotations

import numpy as np
from safetensors.numpy import load_file

from inspector.core.dtypes import DTYPES
from inspector.core.status import TensorStatus
from tests.quant_folders import deepseek_folder, folder, gptq_tensors

W = "model.layers.0.mlp.up_proj.weight"


def _packed_folder(path) -> None:
    """A compressed-tensors int4 weight (packed, group 32) beside a plain norm."""
    import ml_dtypes

    from tests.quant_folders import BF16, I32

    qc = {"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {
        "g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
                                                 "strategy": "group", "group_size": 32}}}}  # fmt: skip
    tensors = [
        ("m.weight_packed", I32, np.arange(64, dtype=np.int32).reshape(8, 8)),
        ("m.weight_scale", BF16, np.ones((8, 2), ml_dtypes.bfloat16)),
        ("m.weight_shape", DTYPES["I64"], np.array([8, 64], np.int64)),
        ("norm.weight", BF16, np.ones(8, ml_dtypes.bfloat16)),
    ]
    folder(path, tensors, qc)


def _open(qtbot, window, path) -> None:
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        window.open_path(str(path))


def test_codes_and_scales_are_quantized_and_the_summary_counts_weights(qtbot, window, tmp_path):
    deepseek_folder(tmp_path / "q")
    _open(qtbot, window, tmp_path / "q")
    model = window.model
    statuses = dict(zip([t.name for t in model.tensors], model.statuses(), strict=True))
    assert statuses[W] is TensorStatus.QUANTIZED
    assert statuses[W + "_scale_inv"] is TensorStatus.QUANTIZED
    assert statuses["model.norm.weight"] is TensorStatus.MATCH
    text = window.summary_label.text()
    assert text.startswith("✓ 0 of 3 tensors differ from BF16 · 1 quantized (FP8 block-scaled")


def test_the_details_pane_shows_the_dequantized_values(qtbot, window, tmp_path):
    made = deepseek_folder(tmp_path / "q")
    _open(qtbot, window, tmp_path / "q")
    if window.current_tensor().name != W:  # the first selection may be it already
        with qtbot.waitSignal(window.details_ready, timeout=20_000):
            window.select_tensor(W)
    stats = window.details.stats
    dequantized = made["codes"].astype(np.float32) * np.repeat(
        np.repeat(made["scale"], 128, 0), 128, 1
    )
    assert stats.max == float(dequantized.max()) and stats.max < 0.2  # the codes reach 448
    assert "block 128×128" in window.details.fields["DType"].text()
    assert window.details.heading.text().replace("\u200b", "") == W
    qtbot.waitUntil(lambda: window.details.fields["Storage"].text() != "", timeout=10_000)
    codes = made["codes"].view(np.uint8)
    used = len(np.unique(codes))
    saturated = int(((codes & 0x7F) == 0x7E).sum())
    assert (
        window.details.fields["Storage"]
        .text()
        .startswith(f"codes used {used} of 254 · saturated {saturated:,} · scales ")
    )


def test_the_cast_dialog_dequantizes_and_the_output_is_plain(qtbot, window, tmp_path):
    made = deepseek_folder(tmp_path / "q")
    _open(qtbot, window, tmp_path / "q")
    dlg = window.open_cast_dialog()
    assert dlg.windowTitle() == "Dequantize & save"
    assert "1 quantized weights (FP8 block-scaled" in dlg.plan_label.text()
    dlg.out_edit.setText(str(tmp_path / "plain"))
    with qtbot.waitSignal(window.cast_done, timeout=30_000):
        dlg.accept()
    got = load_file(tmp_path / "plain" / "model.safetensors")
    assert W + "_scale_inv" not in got and np.abs(got[W].astype(np.float32)).max() < 0.2
    assert made["codes"].shape == got[W].shape


def test_a_scheme_we_cannot_dequantize_disables_the_dialog_with_the_reason(qtbot, window, tmp_path):
    qc = {"quant_method": "awq", "bits": 4, "group_size": 32, "version": "gemv"}
    folder(tmp_path / "g", gptq_tensors(), qc)
    _open(qtbot, window, tmp_path / "g")
    dlg = window.open_cast_dialog()
    ok = dlg.buttons.buttons()[0]
    assert not ok.isEnabled()
    assert "Cannot dequantize: AWQ version 'gemv' packs its weights" in dlg.plan_label.text()
    dlg.reject()


def test_compare_with_the_original_plots_the_precision_lost(qtbot, window, tmp_path):
    import ml_dtypes

    from inspector.core.save.writer import save_arrays
    from tests.quant_folders import BF16, F32

    made = deepseek_folder(tmp_path / "q")
    save_arrays(
        tmp_path / "orig.safetensors",
        [(W, F32, made["true"]), ("model.norm.weight", BF16, np.ones(256, ml_dtypes.bfloat16))],
    )
    _open(qtbot, window, tmp_path / "q")
    with qtbot.waitSignal(window.diff_done, timeout=30_000) as got:
        window.open_reference(str(tmp_path / "orig.safetensors"))
    d = {x.name: x for x in got.args[0]}[W]
    assert d.quant == "fp8" and 0 < d.rel_fro_err < 0.05 and d.sqnr_db > 25
    window.select_tensor("model.norm.weight")
    assert window.select_tensor(W)  # a point of the plot names the logical weight
    assert window.current_tensor().name == W  # fp8 codes keep the weight's name


def test_the_logical_name_of_a_packed_weight_selects_its_codes_row(qtbot, window, tmp_path):
    _packed_folder(tmp_path / "q")
    _open(qtbot, window, tmp_path / "q")
    window.select_tensor("norm.weight")
    assert window.select_tensor("m.weight")  # as the comparison plot names it
    assert window.current_tensor().name == "m.weight_packed"


def test_one_row_per_quantized_weight_with_its_scales_folded_away(qtbot, window, tmp_path):
    from inspector.gui.tensor_columns import Col

    _packed_folder(tmp_path / "q")
    _open(qtbot, window, tmp_path / "q")
    model = window.model

    def shown(col: int) -> list[str]:
        return [model.index(r, col).data() for r in range(model.rowCount())]

    assert shown(Col.NAME) == ["m.weight", "norm.weight"]  # the codes row stands for the weight
    assert shown(Col.SHAPE)[0] == "[8, 64]" and shown(Col.PARAMS)[0] == "512"
    assert shown(Col.SIZE)[0] == "304 B"  # on disk: codes 256 B, scales 32 B, shape 16 B
    assert "stored as m.weight_packed" in model.index(0, Col.NAME).data(3)  # tooltip
    page = window.tensor_page
    assert page.show_scales.isVisible() and not page.show_scales.isChecked()
    page.show_scales.setChecked(True)
    assert model.rowCount() == 4
    page.show_scales.setChecked(False)
    assert window.select_tensor("m.weight_scale")  # asking for a scale unfolds them
    assert page.show_scales.isChecked() and window.current_tensor().name == "m.weight_scale"


def test_a_packed_weights_comparison_is_on_its_row(qtbot, window, tmp_path):
    """The comparison names the logical weight (m.weight); the table's row is its codes
    (m.weight_packed): the |Δ| column must show it there, not on a row that does not exist."""
    import ml_dtypes

    from inspector.core.save.writer import save_arrays
    from inspector.gui.tensor_columns import Col
    from tests.quant_folders import BF16, F32

    _packed_folder(tmp_path / "q")
    w = np.full((8, 64), 0.5, np.float32)  # far from the codes' values: a real difference
    norm = np.ones(8, ml_dtypes.bfloat16)
    save_arrays(tmp_path / "orig.safetensors", [("m.weight", F32, w), ("norm.weight", BF16, norm)])
    _open(qtbot, window, tmp_path / "q")
    with qtbot.waitSignal(window.diff_done, timeout=30_000) as got:
        window.open_reference(str(tmp_path / "orig.safetensors"))
    d = {x.name: x for x in got.args[0]}["m.weight"]
    assert d.quant is not None and d.max_abs_diff > 0
    model = window.model
    cells = {
        model.tensor_at(r).name: model.index(r, Col.REF_DIFF).data()
        for r in range(model.rowCount())
    }
    assert cells["m.weight_packed"] == f"{d.max_abs_diff:.3g}"
    assert cells["norm.weight"] == "0 (equal)"


def test_a_weight_a_cast_refuses_is_not_said_to_be_dequantized(qtbot, window, tmp_path):
    """NVFP4 codes of three dimensions: the table, the pane and the dialog say a cast is
    refused, and why. Before: "a cast dequantizes it" until the cast itself refused."""
    from PySide6.QtCore import Qt

    from inspector.gui.tensor_columns import Col
    from tests.cli.test_quantized import REFUSAL
    from tests.quant_folders import nvfp4_stacked

    folder(tmp_path / "q", *nvfp4_stacked())
    _open(qtbot, window, tmp_path / "q")
    if window.current_tensor().name != "m.weight_packed":
        with qtbot.waitSignal(window.details_ready, timeout=20_000):
            window.select_tensor("m.weight_packed")
    dtype = window.details.fields["DType"].text()
    assert dtype.startswith("U8 — quantized: a cast is refused (") and "dequantizes" not in dtype
    model = window.model
    cell = model.index(model.row_of("m.weight_packed"), Col.STATUS)
    tip = model.data(cell, Qt.ItemDataRole.ToolTipRole)
    assert tip.endswith(f"A cast is refused, so nothing writes them as values: {REFUSAL}")
    spoken = model.data(cell, Qt.ItemDataRole.AccessibleTextRole)
    assert spoken == "quantized: a cast is refused"
    dlg = window.open_cast_dialog()
    assert not dlg.buttons.buttons()[0].isEnabled()
    assert f"Cannot dequantize: {REFUSAL}." in dlg.plan_label.text()
    dlg.reject()
