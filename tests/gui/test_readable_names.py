"""Names a person can read: at 800×600 with the module tree open, after a cast and a compare,
no two rows show the same (compacted) name; the full name is in the tooltip."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.dtypes import DTYPES
from inspector.gui.name_elision import compact_name
from inspector.gui.tensor_columns import Col
from tests.llm_checkpoint import write_llm_checkpoint


@pytest.fixture
def llm(tmp_path) -> Path:
    path = tmp_path / "llm.safetensors"
    assert len(write_llm_checkpoint(path)) == 390
    return path


def shown_names(win) -> list[str]:
    table = win.table
    width = table.columnWidth(Col.NAME) - 10
    fm = table.fontMetrics()
    return [compact_name(t.name, width, fm.horizontalAdvance) for t in win.model.tensors]


def test_names_stay_distinct_at_800x600_with_the_tree_after_cast_and_compare(
    qtbot, window, llm, tmp_path
):
    window.resize(800, 600)
    window.show_module_tree(True)
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        window.open_path(str(llm))
    with qtbot.waitSignal(window.cast_done, timeout=30_000):
        window.start_cast(str(tmp_path / "out.safetensors"), DTYPES["BF16"])
    with qtbot.waitSignal(window.diff_done, timeout=30_000):
        window.open_reference(str(tmp_path / "out.safetensors"))
    qtbot.wait(50)
    assert window.module_tree.isVisible()
    assert not window.table.isColumnHidden(Col.CAST_ERR) and not window.table.isColumnHidden(
        Col.REF_DIFF
    )
    names = shown_names(window)
    assert len(set(names)) == len(names), [n for n in names if names.count(n) > 1][:5]
    assert any(n != t.name for n, t in zip(names, window.model.tensors, strict=True))  # compacted
    r = window.model.row_of("model.layers.1.bn.num_batches_tracked")
    assert (
        window.model.index(r, Col.NAME).data(3) == "model.layers.1.bn.num_batches_tracked"
    )  # tooltip


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_names_distinct_at_larger_sizes(qtbot, window, llm, size):
    window.resize(*size)
    window.show_module_tree(True)
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        window.open_path(str(llm))
    qtbot.wait(50)
    names = shown_names(window)
    assert len(set(names)) == len(names)


def test_compaction_keeps_the_layer_number_before_anything_else():
    measure = len  # one unit per character
    name = "model.layers.11.self_attn.q_proj.weight"
    assert compact_name(name, 100, measure) == name
    assert compact_name(name, 22, measure) == "m.l.11.s.q_proj.weight"
    assert compact_name(name, 17, measure) == "m.l.11.s.q.weight"
    assert compact_name(name, 12, measure) == "…11.q.weight"
    assert compact_name(name, 9, measure).startswith("…11.")
    assert compact_name("x" * 2000, 10, measure) == "…" + "x" * 9


def test_hidden_columns_are_the_persons_choice_and_remembered(qtbot, settings, llm):
    from inspector.gui.main_window import MainWindow

    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    page = win.tensor_page
    assert win.table.isColumnHidden(Col.PARAMS)  # by default: Shape and Size say it
    page.columns.toggle(Col.PARAMS, True)
    page.columns.toggle(Col.SHAPE, False)
    win.close()
    again = MainWindow(settings=settings)
    qtbot.addWidget(again)
    assert not again.table.isColumnHidden(Col.PARAMS) and again.table.isColumnHidden(Col.SHAPE)
    assert not again.table.isColumnHidden(Col.NAME)
