"""Names win the table's width (issue 29 item 14): at 1000×700 after a cast the whole names
show, not ``m.l.0.m.d.weight`` beside wide Status and Rel. error columns; at 800×600 with the
module tree open every shown column fits the viewport; within a module names read relative to it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStyle

from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays
from inspector.gui.tensor_columns import Col, ShownNameRole

PARTS = ("self_attn.k_proj.weight", "self_attn.q_proj.weight", "mlp.down_proj.weight")


@pytest.fixture
def layers(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    path = tmp_path / "layers.safetensors"
    save_arrays(
        path,
        [
            (f"model.layers.{i}.{p}", DTYPES["F32"], rng.standard_normal(64).astype(np.float32))
            for i in range(4)
            for p in PARTS
        ],
    )
    return path


def _open_and_cast(qtbot, window, path: Path, size: tuple[int, int], tree: bool) -> None:
    window.resize(*size)
    window.show_module_tree(tree)
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        window.open_path(str(path))
    with qtbot.waitSignal(window.cast_done, timeout=30_000):
        window.start_cast(str(path.with_name("out.safetensors")), DTYPES["F16"])
    qtbot.wait(50)  # the resize's deferred fit


def _painted(window, row: int) -> str:
    """What the name delegate paints in ``row`` at the column's current width."""
    from PySide6.QtWidgets import QStyleOptionViewItem

    table = window.table
    index = window.model.index(row, Col.NAME)
    opt = QStyleOptionViewItem()
    opt.initFrom(table)
    shown = index.data(ShownNameRole)
    return window.tensor_page.name_delegate.display_text(shown, table.columnWidth(Col.NAME), opt)


def test_whole_names_show_at_1000x700_after_a_cast(qtbot, window, layers):
    _open_and_cast(qtbot, window, layers, (1000, 700), tree=False)
    table = window.table
    assert not table.isColumnHidden(Col.CAST_ERR) and not table.isColumnHidden(Col.STATUS)
    for row in range(window.model.rowCount()):
        assert _painted(window, row) == window.model.index(row, Col.NAME).data()
    # the resize to 800×600 after it is laid out and painted: names compacted, still distinct
    window.resize(800, 600)
    qtbot.waitUntil(lambda: _painted(window, 0) != window.model.index(0, Col.NAME).data())
    painted = [_painted(window, r) for r in range(window.model.rowCount())]
    assert len(set(painted)) == len(painted)


def test_every_shown_column_fits_at_800x600_with_the_module_tree(qtbot, window, layers):
    _open_and_cast(qtbot, window, layers, (800, 600), tree=True)
    table = window.table
    assert window.module_tree.isVisible()
    shown = [c for c in Col if not table.isColumnHidden(c)]
    assert {Col.NAME, Col.STATUS, Col.CAST_ERR} <= set(shown)
    assert sum(table.columnWidth(c) for c in shown) <= table.viewport().width()
    assert table.horizontalScrollBar().maximum() == 0  # nothing off-screen
    # the columns other cells repeat were left out for lack of room, not hidden by the person
    left_out = window.tensor_page.columns.left_out()
    assert left_out and left_out <= {Col.PARAMS, Col.SIZE, Col.SHAPE, Col.DTYPE}
    # the header menu says why a ticked column is not drawn (it read as shown)
    columns = window.tensor_page.columns
    columns._menu(table.horizontalHeader().rect().center())
    texts = [a.text() for a in columns.menu.actions()]
    from inspector.gui.tensor_columns import header_text

    assert {f"{header_text(c)} (no room at this width)" for c in left_out} <= set(texts)
    columns.menu.close()
    window.resize(1280, 800)  # room again: they come back
    qtbot.waitUntil(lambda: not table.isColumnHidden(Col.SHAPE))


def test_names_read_relative_to_the_selected_module(qtbot, window, layers):
    _open_and_cast(qtbot, window, layers, (800, 600), tree=True)
    window.tensor_page.filter_prefix("model.layers.1.")  # what a click in the module tree does
    model = window.model
    assert model.rowCount() == len(PARTS)
    shown = sorted(model.index(r, Col.NAME).data(ShownNameRole) for r in range(len(PARTS)))
    assert shown == sorted(PARTS)
    assert model.index(0, Col.NAME).data().startswith("model.layers.1.")  # copy, tooltip: whole
    assert model.headerData(Col.NAME, Qt.Orientation.Horizontal) == "Name in model.layers.1"
    assert _painted(window, 0) in PARTS
    # where there is room, the header's title is not cut: the section is as wide as Qt says its
    # contents need (the relative names alone are narrower than "Name in model.layers.1")
    window.show_module_tree(False)
    window.resize(1000, 700)
    header = window.table.horizontalHeader()
    qtbot.waitUntil(
        lambda: header.sectionSize(Col.NAME) >= header.sectionSizeFromContents(Col.NAME).width()
    )
    window.tensor_page.filter_edit.setText("down_proj")  # a word, not a module: whole names
    window.tensor_page.apply_filter()
    assert model.index(0, Col.NAME).data(ShownNameRole) == "model.layers.0.mlp.down_proj.weight"
    assert model.headerData(Col.NAME, Qt.Orientation.Horizontal) == "Name"


def test_the_dtype_column_fits_an_fp8_weight_and_keeps_a_width_the_person_chose(
    qtbot, window, tmp_path
):
    """A DeepSeek-style weight's stored type showed as ``…E4M3`` at 1000×700: the column was
    sized for ``BF16``. It grows to the widest dtype shown, not past a width dragged by hand."""
    from tests.quant_folders import deepseek_folder

    deepseek_folder(tmp_path / "ds")
    window.resize(1000, 700)
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        window.open_path(str(tmp_path / "ds"))
    table = window.table
    texts = {window.model.index(r, Col.DTYPE).data() for r in range(window.model.rowCount())}
    assert "F8_E4M3" in texts
    for text in texts:  # as the table's delegate elides it (its margins: 1 + the focus frame's)
        margin = table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table)
        room = table.columnWidth(Col.DTYPE) - 2 * (margin + 1)
        assert table.fontMetrics().elidedText(text, Qt.TextElideMode.ElideLeft, room) == text
    table.horizontalHeader().resizeSection(Col.DTYPE, 50)  # the person narrows it
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        window.open_path(str(tmp_path / "ds"))
    assert table.columnWidth(Col.DTYPE) == 50
