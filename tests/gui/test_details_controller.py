"""The details pane's controller, with no MainWindow: what the pane says about the selected
tensor (its facts, statistics, the last cast), from cache or from a background request, and
what it says when a request fails (a file truncated in place, a saved file gone)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from inspector.core.dtypes import DTYPES
from tests.gui.waits import wait_ms

QUERY = "encoder.layer.1.attention.self.query.weight"  # F64
KEY = "encoder.layer.1.attention.self.key.weight"  # F64
IDS = "embeddings.position_ids"  # I64
NORM = "embeddings.LayerNorm.weight"  # F32
HEAD = "classifier.weight"  # BF16


@pytest.fixture
def pane(qtbot, controller_parts):
    """(session, window controller, cast controller, details controller, page)."""
    from inspector.gui.details_controller import DetailsController

    session, window, cast, page = controller_parts
    details = DetailsController(session, window.runner, page, parent=page)
    return session, window, cast, details, page


def _open(qtbot, window, details, path: Path) -> None:
    """Open, and wait for the pane of the tensor the window selects at first."""
    with qtbot.waitSignals([window.loaded, details.details_ready], timeout=wait_ms(20_000)):
        window.open_path(str(path))


def _select(qtbot, session, details, page, name: str) -> None:
    """As the table does: the page's current-row signal, then the pane is drawn."""
    t = session.checkpoint[name]
    with qtbot.waitSignal(
        details.details_ready, timeout=wait_ms(20_000), check_params_cb=name.__eq__
    ):
        page.sig_current_changed.emit(t)
    assert session.current is t


def test_a_selected_tensor_shows_its_facts_then_its_statistics(qtbot, pane, model_file: Path):
    session, window, _cast, details, page = pane
    pd = page.details
    page.sig_current_changed.emit(None)  # nothing open: the view's signal selects nothing
    assert session.current is None and pd.heading.text() == "No tensor selected"
    _open(qtbot, window, details, model_file)
    _select(qtbot, session, details, page, QUERY)
    assert pd.field("DType") == "F64 — differs: F64 → F32"
    assert pd.field("Cast") == "not cast yet (Ctrl+S)"
    values = session.checkpoint.view(session.checkpoint[QUERY])
    assert (pd.stats.min, pd.stats.max) == (values.min(), values.max())
    assert pd.field("NaN / inf") == "0 / 0"
    assert pd.histogram.title == "Values (F64)"
    assert not pd.fields["Reference"].isVisibleTo(pd)
    # a tensor seen before answers from the cache: the pane is ready before select returns
    _select(qtbot, session, details, page, IDS)
    assert pd.field("DType") == "I64 — kept (not a float)"
    ready: list[str] = []
    details.details_ready.connect(ready.append)
    page.sig_current_changed.emit(session.checkpoint[QUERY])
    assert ready == [QUERY] and (pd.stats.min, pd.stats.max) == (values.min(), values.max())
    # no selection: the pane is empty again
    page.sig_current_changed.emit(None)
    assert session.current is None and pd.tensor is None
    assert pd.heading.text() == "No tensor selected" and pd.field("DType") == ""


def test_the_model_dtype_rewords_the_selected_tensors_status(qtbot, pane, model_file: Path):
    session, window, _cast, details, page = pane
    pd = page.details
    _open(qtbot, window, details, model_file)
    _select(qtbot, session, details, page, QUERY)
    session.set_target(DTYPES["F64"])
    assert pd.field("DType") == "F64 — matches F64"
    session.set_target(DTYPES["BF16"])
    assert pd.field("DType") == "F64 — differs: F64 → BF16"
    page.sig_current_changed.emit(None)
    session.set_target(DTYPES["F16"])  # nothing selected: nothing to reword
    assert pd.field("DType") == ""


def test_copy_name_puts_the_selected_tensors_name_on_the_clipboard(qtbot, pane, model_file: Path):
    session, window, _cast, details, page = pane
    clipboard = QApplication.clipboard()
    clipboard.setText("before")
    page.sig_copy_name.emit()  # nothing selected: the clipboard is left alone
    assert clipboard.text() == "before"
    _open(qtbot, window, details, model_file)
    _select(qtbot, session, details, page, KEY)
    page.sig_copy_name.emit()
    assert clipboard.text() == KEY


def test_after_a_cast_the_pane_says_what_was_written_for_each_tensor(
    qtbot, pane, model_file: Path, tmp_path: Path
):
    session, window, cast, details, page = pane
    pd = page.details
    _open(qtbot, window, details, model_file)
    _select(qtbot, session, details, page, QUERY)
    out = tmp_path / "out.safetensors"
    # the cast redraws the selected tensor with its before/after plots
    with qtbot.waitSignals([cast.cast_done, details.details_ready], timeout=wait_ms(30_000)):
        cast.start_cast(str(out), DTYPES["F16"], ("embeddings.LayerNorm.*",))
    rep = session.cast.by_name[QUERY]
    assert rep.from_ == "F64" and rep.to == "F16" and not rep.lossless
    assert pd.field("Cast").startswith("F64 → F16: rel. err max ")
    assert pd.field("Cast").endswith("\noverflow 0 · underflow 0 · NaN 0")
    assert pd.histogram.mode == "before_after"
    assert pd.histogram.title == "Values before / after the cast"
    assert pd.histogram.legend_labels() == ["original F64", "saved F16"]
    saved = np.asarray(session.cast.output.get().view(QUERY))
    assert pd.histogram.after_item.getData()[1].sum() == saved.size
    # seen before: the plots come from the cache, drawn before select returns
    _select(qtbot, session, details, page, KEY)
    ready: list[str] = []
    details.details_ready.connect(ready.append)
    page.sig_current_changed.emit(session.checkpoint[QUERY])
    assert ready == [QUERY] and pd.histogram.mode == "before_after"
    assert pd.histogram.legend_labels() == ["original F64", "saved F16"]
    # not cast: an int, a tensor kept by a pattern
    _select(qtbot, session, details, page, IDS)
    assert pd.field("Cast") == "written unchanged as I64 (not a float)"
    _select(qtbot, session, details, page, NORM)
    assert pd.field("Cast") == (
        "written unchanged as F32 (kept by a pattern, or a format torch cannot cast exactly)"
    )
    assert pd.histogram.mode != "before_after"


def test_a_cast_to_the_dtype_a_tensor_has_says_already(
    qtbot, pane, model_file: Path, tmp_path: Path
):
    session, window, cast, details, page = pane
    _open(qtbot, window, details, model_file)
    with qtbot.waitSignal(cast.cast_done, timeout=wait_ms(30_000)):
        cast.start_cast(str(tmp_path / "out.safetensors"), DTYPES["F32"], ())
    _select(qtbot, session, details, page, NORM)
    assert page.details.field("Cast") == "written unchanged as F32 (already F32)"


def test_a_saved_file_that_cannot_be_read_says_so_in_the_error_plot(
    qtbot, pane, model_file: Path, tmp_path: Path
):
    session, window, cast, details, page = pane
    _open(qtbot, window, details, model_file)
    out = tmp_path / "out.safetensors"
    with qtbot.waitSignal(cast.cast_done, timeout=wait_ms(30_000)):
        cast.start_cast(str(out), DTYPES["F16"], ())
    os.truncate(out, 100)  # another program cut the saved file short
    _select(qtbot, session, details, page, KEY)
    title = page.details.error_plot.title
    assert title.startswith(f"Could not read the saved file: {out}"), title
    assert page.details.field("Cast").startswith("F64 → F16: ")


def test_statistics_of_a_file_truncated_in_place_say_why_they_are_unavailable(
    qtbot, pane, model_file: Path
):
    session, window, _cast, details, page = pane
    pd = page.details
    _open(qtbot, window, details, model_file)
    assert session.current.name == HEAD  # the first tensor that differs: its stats are in
    os.truncate(model_file, 200)
    _select(qtbot, session, details, page, NORM)
    why = f"{model_file}: file was truncated on disk since it was opened; reopen it"
    assert pd.field("Range") == f"unavailable: {why}"  # the reason once, not in every row
    assert (pd.field("Mean ± std"), pd.field("NaN / inf")) == ("—", "—")
    assert pd.histogram.title == "Values: unavailable"
    assert pd.stats is None
    # a failed answer is not cached: the next selection asks again (and fails again)
    _select(qtbot, session, details, page, QUERY)
    _select(qtbot, session, details, page, NORM)
    assert pd.field("Range") == f"unavailable: {why}"


def test_a_stale_statistics_answer_is_not_shown_on_the_next_tensor(qtbot, pane, big_file: Path):
    """Selecting B while A's statistics are computed: A's answer is cached, B's is shown."""
    session, window, _cast, details, page = pane
    pd = page.details
    _open(qtbot, window, details, big_file)
    first, second = "layer.0.weight", "layer.1.weight"
    ready: list[str] = []
    details.details_ready.connect(ready.append)
    page.sig_current_changed.emit(session.checkpoint[first])
    with qtbot.waitSignal(
        details.details_ready, timeout=wait_ms(20_000), check_params_cb=second.__eq__
    ):
        page.sig_current_changed.emit(session.checkpoint[second])
    b = session.checkpoint.view(session.checkpoint[second])
    assert (pd.stats.min, pd.stats.max) == (b.min(), b.max())
    assert pd.heading.text().replace("\u200b", "") == second
    assert first not in ready


def test_what_the_pane_says_is_chinese_in_zh_cn(
    qtbot, zh_cn, pane, model_file: Path, tmp_path: Path
):
    """Each of the controller's messages in zh_CN: one looked up under another context stays
    English."""
    session, window, cast, details, page = pane
    pd = page.details
    _open(qtbot, window, details, model_file)
    out = tmp_path / "out.safetensors"
    with qtbot.waitSignal(cast.cast_done, timeout=wait_ms(30_000)):
        cast.start_cast(str(out), DTYPES["F16"], ("embeddings.LayerNorm.*",))
    _select(qtbot, session, details, page, IDS)
    assert pd.field("Cast") == "按原样写为 I64（非浮点）"
    _select(qtbot, session, details, page, NORM)
    assert pd.field("Cast") == "按原样写为 F32（被规则保留，或是 torch 无法精确转换的格式）"
    os.truncate(out, 100)
    _select(qtbot, session, details, page, KEY)
    assert pd.error_plot.title.startswith(f"无法读取保存的文件：{out}")
    with qtbot.waitSignal(cast.cast_done, timeout=wait_ms(30_000)):
        cast.start_cast(str(tmp_path / "f32.safetensors"), DTYPES["F32"], ())
    _select(qtbot, session, details, page, "embeddings.LayerNorm.bias")
    assert pd.field("Cast") == "按原样写为 F32（已是 F32）"
    from tests.gui.test_quantized_window import _packed_folder

    _packed_folder(tmp_path / "q")
    _open(qtbot, window, details, tmp_path / "q")
    if session.current.name != "m.weight_packed":
        _select(qtbot, session, details, page, "m.weight_packed")
    qtbot.waitUntil(lambda: pd.stats is not None, timeout=wait_ms(20_000))
    assert pd.histogram.title == "数值（反量化后）"


def test_a_comparison_shows_the_selected_tensors_reference_line(
    qtbot, pane, model_file: Path, f32_file: Path
):
    session, window, _cast, details, page = pane
    pd = page.details
    _open(qtbot, window, details, model_file)
    _select(qtbot, session, details, page, QUERY)
    assert not pd.fields["Reference"].isVisibleTo(pd)
    with qtbot.waitSignal(window.diff_done, timeout=wait_ms(30_000)):
        window.open_reference(str(f32_file))
    d = session.diff_by_name[QUERY]
    assert d.dtype_b == "F32" and d.max_abs_diff > 0
    assert pd.fields["Reference"].isVisibleTo(pd)
    assert pd.field("Reference").startswith("max |Δ| ")
    assert pd.field("Reference").endswith(" (reference stores F32)")
    marked = page.plots_tabs.diff_plot.selected_item.getData()
    assert len(marked[0]) == 1  # the selected tensor's point is marked in the diff plot
    _select(qtbot, session, details, page, KEY)  # the mark follows the selection
    moved = page.plots_tabs.diff_plot.selected_item.getData()
    assert len(moved[0]) == 1 and moved[0][0] != marked[0][0]
    _select(qtbot, session, details, page, IDS)
    assert pd.field("Reference") == "equal values (reference stores I64)"


def test_a_packed_weight_is_shown_as_the_weight_it_stores(qtbot, pane, tmp_path: Path):
    """int4 codes packed eight to an I32: the pane names the weight, its logical shape and
    dequantized values, not the I32 array it is stored in."""
    from tests.gui.test_quantized_window import _packed_folder

    session, window, _cast, details, page = pane
    pd = page.details
    _packed_folder(tmp_path / "q")
    _open(qtbot, window, details, tmp_path / "q")
    if session.current.name != "m.weight_packed":
        _select(qtbot, session, details, page, "m.weight_packed")
    assert pd.field("DType") == (
        "I32 — quantized: a cast dequantizes it (int4 packed in I32, group 32, scales BF16; "
        "[8, 64])"
    )
    assert pd.heading.text().replace("\u200b", "") == "m.weight"
    assert pd.field("Shape") == "[8, 64] · 512 values"
    assert pd.histogram.title == "Values (dequantized)"
