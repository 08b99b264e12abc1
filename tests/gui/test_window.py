"""The window, driven like a person would: drops, the target chooser, details, compare."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.save.writer import save_arrays
from inspector.gui.empty_page import EMPTY_TEXT
from inspector.gui.tensor_columns import Col

from .conftest import BF16_NAMES, F64_NAMES

BG = Qt.ItemDataRole.BackgroundRole


def drop(target, paths, modifiers=Qt.KeyboardModifier.NoModifier, urls=None):
    """Send DragEnter then Drop carrying file URLs, as a file manager would."""
    md = QMimeData()
    md.setUrls(urls if urls is not None else [QUrl.fromLocalFile(str(p)) for p in paths])
    pos = QPointF(target.width() / 2, target.height() / 2)
    enter = QDragEnterEvent(
        pos.toPoint(), Qt.DropAction.CopyAction, md, Qt.MouseButton.LeftButton, modifiers
    )
    QApplication.sendEvent(target, enter)
    ev = QDropEvent(pos, Qt.DropAction.CopyAction, md, Qt.MouseButton.LeftButton, modifiers)
    QApplication.sendEvent(target, ev)
    return enter, ev


def highlighted(win):
    m = win.model
    return {m.tensor_at(r).name for r in range(m.rowCount()) if m.index(r, 0).data(BG) is not None}


def test_empty_state_invites_a_drop(window):
    assert window.stack.currentIndex() == 0
    assert window.empty_label.text() == EMPTY_TEXT
    assert not window.cast_action.isEnabled()


def test_drop_of_a_file_url_loads_it(qtbot, window, model_file):
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=20_000):
        enter, ev = drop(window, [model_file])
        assert enter.isAccepted()
        assert ev.isAccepted()
    assert window.stack.currentIndex() == 1
    assert window.model.rowCount() == 21
    assert window.ckpt.path == str(model_file)
    assert str(model_file) in window.recent_files()
    assert "model.safetensors" in window.windowTitle()
    assert window.summary_label.text() == (
        "⚠ 5 of 21 tensors differ from F32 · 4.4 k params · 20.2 KiB · F64×4 BF16×1 I64×1"
    )
    # the default order puts the differing tensors first, names in natural order: the first one
    # is selected and its statistics are shown
    t = window.current_tensor()
    assert t.name == "classifier.weight"
    ref = np.asarray(window.ckpt.view(t), dtype=np.float64)
    assert window.details.stats.max == pytest.approx(ref.max())
    assert window.details.stats.mean == pytest.approx(ref.mean())
    edges, counts = window.details.histogram.before_item.getData()
    assert len(edges) == len(counts) + 1 == 65  # stepMode="center"
    assert counts.sum() == t.numel


def test_drop_onto_a_child_widget_and_a_folder(qtbot, window, model_file):
    # a drop on the table's viewport (or anywhere) reaches the window; folders open too
    viewport = window.table.viewport()
    assert not viewport.acceptDrops() and not window.filter_edit.acceptDrops()
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        drop(window, [model_file.parent])
    assert window.model.rowCount() == 21


def test_bad_drop_shows_a_message_and_keeps_what_was_open(qtbot, loaded, tmp_path):
    bad = tmp_path / "notes.safetensors"
    bad.write_bytes(b"this is not a checkpoint at all")
    with qtbot.waitSignal(loaded.load_failed, timeout=10_000) as blocker:
        drop(loaded, [bad])
    assert "notes.safetensors" in blocker.args[0]
    assert loaded.message_bar.isVisible()
    assert loaded.message_bar.kind == "error"
    assert "Could not open" in loaded.message_bar.text
    assert "still showing the previous checkpoint" in loaded.message_bar.text
    assert loaded.model.rowCount() == 21
    assert loaded.ckpt.path.endswith("model.safetensors")

    # a pickle is named as such
    pt = tmp_path / "model.pt"
    pt.write_bytes(b"\x80\x02}q\x00.")
    with qtbot.waitSignal(loaded.load_failed, timeout=10_000) as blocker:
        drop(loaded, [pt])
    assert "pickle" in blocker.args[0].lower()
    # a remote URL is refused with words, not silently
    drop(loaded, [], urls=[QUrl("https://example.com/model.safetensors")])
    assert "Only local files" in loaded.message_bar.text


def test_two_dropped_files_open_the_first_and_compare_with_the_second(
    qtbot, window, model_file, f32_file
):
    """They were read as their folder ("holds N .safetensors files but no index.json")."""
    with qtbot.waitSignal(window.diff_done, timeout=20_000):
        drop(window, [model_file, f32_file])
    assert window.ckpt.path == str(model_file)
    assert window.reference.path == str(f32_file)


def test_a_dropped_config_json_opens_its_folder(qtbot, window, tmp_path, model_file):
    folder = model_file.parent
    (folder / "config.json").write_text('{"torch_dtype": "float32"}')
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        drop(window, [folder / "config.json"])
    assert window.ckpt.path == str(model_file)


def test_three_dropped_files_are_explained(qtbot, window, model_file, f32_file):
    with qtbot.waitSignal(window.load_failed, timeout=10_000):
        drop(window, [model_file, f32_file, model_file])
    assert "3 items were dropped" in window.message_bar.text


def test_bad_drop_on_empty_window(qtbot, window, tmp_path):
    with qtbot.waitSignal(window.load_failed, timeout=10_000):
        drop(window, [tmp_path / "missing.safetensors"])
    assert "no such file" in window.message_bar.text
    assert window.stack.currentIndex() == 0


def test_target_chooser_changes_highlighting_and_is_remembered(qtbot, loaded, settings):
    assert highlighted(loaded) == set(F64_NAMES + BF16_NAMES)
    assert loaded.plots_tabs.isVisible() and loaded.plots_tabs.currentWidget() is loaded.hint
    assert "FloatCastAdapter::to(DType::F32)" in loaded.hint.fix.text()

    loaded.target_box.setCurrentText("F64")
    assert loaded.target.name == "F64"
    assert F64_NAMES[0] not in highlighted(loaded)
    # every non-F64 float but the two F32 LayerNorms, marked "F32 on purpose?" instead
    norms = {n for n in (t.name for t in loaded.ckpt.tensors) if "LayerNorm" in n}
    assert len(norms) == 2 and not norms & highlighted(loaded)
    assert len(highlighted(loaded)) == 21 - 4 - 1 - 2
    assert loaded.summary_label.text().startswith("⚠ 16 of 21 tensors differ from F64")
    assert "DType::F64" in loaded.hint.fix.text()
    assert settings.value("target") == "F64"

    loaded.target_box.setCurrentText("BF16")
    assert highlighted(loaded) == {
        n
        for n in (t.name for t in loaded.ckpt.tensors)
        if n not in BF16_NAMES and n != "embeddings.position_ids" and "LayerNorm" not in n
    }
    # remembered for the next window
    from inspector.gui.main_window import MainWindow

    again = MainWindow(settings=settings)
    qtbot.addWidget(again)
    assert again.target.name == "BF16"


def test_hint_copy_puts_the_fix_on_the_clipboard(loaded):
    loaded.hint.copy_button.click()
    assert QApplication.clipboard().text() == (
        "PyTorchToBurnAdapter.chain(FloatCastAdapter::to(DType::F32))"
    )


def test_filter_box_and_only_differing(qtbot, loaded):
    loaded.filter_edit.setText("classifier")
    qtbot.waitUntil(lambda: loaded.model.rowCount() == 2, timeout=3000)
    loaded.filter_edit.clear()
    qtbot.waitUntil(lambda: loaded.model.rowCount() == 21, timeout=3000)
    loaded.only_differing.setChecked(True)
    assert loaded.model.rowCount() == 5
    assert loaded.count_label.text() == "5 of 21"
    loaded.target_box.setCurrentText("F64")
    assert loaded.model.rowCount() == 16


def test_header_click_sorts(qtbot, loaded):
    header = loaded.table.horizontalHeader()
    header.setSortIndicator(Col.SIZE, Qt.SortOrder.DescendingOrder)
    sizes = [loaded.model.index(r, Col.SIZE).data(Qt.ItemDataRole.DisplayRole) for r in range(3)]
    assert sizes[0] == "6.2 KiB"  # word embeddings, the biggest tensor


def test_selecting_a_tensor_shows_its_details(qtbot, loaded):
    name = "embeddings.position_ids"
    with qtbot.waitSignal(loaded.details_ready, timeout=10_000):
        assert loaded.select_tensor(name)
    d = loaded.details
    assert d.heading.text().replace("\u200b", "") == name  # break points for wrapping
    assert d.field("DType") == "I64 — kept (not a float)"
    assert d.field("Shape") == "[1, 32] · 32 values"
    t = loaded.ckpt[name]
    start, end = loaded.ckpt.byte_range(t)
    assert d.field("Bytes").startswith(f"{start:,} – {end:,}")
    assert d.field("Range") == "0 … 31"
    _, counts = d.histogram.before_item.getData()
    assert counts.sum() == 32
    # cached: selecting it again is immediate
    with qtbot.waitSignal(
        loaded.details_ready, timeout=10_000, check_params_cb=lambda n: n == F64_NAMES[0]
    ):
        loaded.select_tensor(F64_NAMES[0])
    with qtbot.waitSignal(loaded.details_ready, timeout=1000, check_params_cb=lambda n: n == name):
        loaded.select_tensor(name)


def test_compare_with_reference_by_shift_drop(qtbot, loaded, f32_file):
    with qtbot.waitSignal(loaded.diff_done, timeout=20_000) as blocker:
        drop(loaded, [f32_file], modifiers=Qt.KeyboardModifier.ShiftModifier)
    diffs = {d.name: d for d in blocker.args[0]}
    # the primary stays open; the reference is compared against it
    assert loaded.ckpt.path.endswith("model.safetensors")
    assert loaded.reference.path == str(f32_file)
    assert not loaded.table.isColumnHidden(Col.REF_DIFF)
    src = open_checkpoint(loaded.ckpt.path)
    ref = open_checkpoint(f32_file)
    q = F64_NAMES[0]
    a = np.asarray(src.view(q), np.float64)
    b = np.asarray(ref.view(q), np.float64)
    assert diffs[q].max_abs_diff == pytest.approx(np.abs(a - b).max())
    assert diffs[q].max_abs_diff > 0
    assert diffs["embeddings.LayerNorm.weight"].max_abs_diff == 0
    m = loaded.model
    r = m.row_of(q)
    assert m.index(r, Col.REF_DIFF).data() == f"{diffs[q].max_abs_diff:.3g}"
    # the plot holds one point per tensor; the equal ones are the marked (triangle) ones
    plot = loaded.diff_plot
    assert plot.isVisible() and loaded.plots_tabs.currentWidget() is loaded.diff_panel
    x, y = plot.lossy_item.getData()
    # log-mode plot: data stored raw, mapped by the item
    assert len(x) == sum(1 for d in diffs.values() if d.max_abs_diff)
    xl, _ = plot.lossless_item.getData()
    assert len(xl) == sum(1 for d in diffs.values() if d.max_abs_diff == 0)
    assert len(x) + len(xl) == 21
    # no "1 tensors differ": the banner counts without plural nouns
    assert loaded.message_bar.text.startswith(
        f"Compared with model.f32.safetensors: {len(x)} differing (worst max |Δ| "
    )
    assert loaded.message_bar.text.endswith(f", {len(xl)} equal.")


def test_details_show_the_reference_difference(qtbot, loaded, f32_file):
    with qtbot.waitSignal(loaded.diff_done, timeout=20_000):
        loaded.open_reference(str(f32_file))
    with qtbot.waitSignal(
        loaded.details_ready, timeout=10_000, check_params_cb=lambda n: n == F64_NAMES[0]
    ):
        loaded.select_tensor(F64_NAMES[0])
    assert loaded.details.field("Reference").startswith("max |Δ| ")
    with qtbot.waitSignal(
        loaded.details_ready, timeout=10_000, check_params_cb=lambda n: n == BF16_NAMES[0]
    ):
        loaded.select_tensor(BF16_NAMES[0])
    assert loaded.details.field("Reference") == "equal values (reference stores F32)"
    loaded.clear_reference()
    assert loaded.table.isColumnHidden(Col.REF_DIFF)
    assert not loaded.plots_tabs.isTabVisible(2)


def test_open_recent_menu_lists_opened_files(qtbot, loaded, model_file, f32_file):
    with qtbot.waitSignal(loaded.loaded, timeout=10_000):
        loaded.open_path(str(f32_file))
    loaded.recent_menu.aboutToShow.emit()
    texts = [a.text() for a in loaded.recent_menu.actions()]
    assert texts[:2] == [str(f32_file), str(model_file)]
    with qtbot.waitSignal(loaded.loaded, timeout=10_000):
        loaded.recent_menu.actions()[1].trigger()
    assert loaded.ckpt.path == str(model_file)


def test_module_tree_groups_by_prefix_and_filters(qtbot, loaded):
    loaded.tree_action.trigger()
    tree = loaded.module_tree
    assert tree.isVisible()
    root = tree.topLevelItem(0)
    assert root.text(1) == "21" and root.text(2) == "5"
    kids = {root.child(i).text(0): root.child(i) for i in range(root.childCount())}
    assert set(kids) == {"embeddings", "encoder", "classifier"}
    assert kids["classifier"].text(2) == "1"
    assert kids["encoder"].text(1) == "15" and kids["encoder"].text(2) == "4"
    layer1 = tree.find_prefix("encoder.layer.1.")
    assert layer1 is not None and layer1.text(1) == "7" and layer1.text(2) == "3"
    assert layer1.background(0).color() != root.background(0).color()  # highlighted …
    assert not layer1.icon(0).isNull()  # … and marked with an icon
    tree.itemClicked.emit(layer1, 0)
    assert loaded.filter_edit.text() == "encoder.layer.1.*"
    names = {loaded.model.index(r, 0).data() for r in range(loaded.model.rowCount())}
    assert len(names) == 7 and all(n.startswith("encoder.layer.1.") for n in names)
    # the counts follow the target dtype
    loaded.target_box.setCurrentText("F64")
    assert tree.topLevelItem(0).text(2) == "16"


def test_copy_tensor_name(loaded):
    loaded.copy_name_action.trigger()
    assert QApplication.clipboard().text() == loaded.current_tensor().name


def test_empty_state_lists_recent_files_as_links(qtbot, settings, model_file):
    from inspector.gui.main_window import MainWindow

    settings.setValue("recent", [str(model_file)])
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    assert str(model_file) in win.recent_label.text()
    with qtbot.waitSignal(win.loaded, timeout=10_000):
        win.recent_label.linkActivated.emit(str(model_file))
    assert win.model.rowCount() == 21


def test_help_menu_has_shortcuts_and_about(qtbot, window):
    menus = [a.text() for a in window.menuBar().actions()]
    assert menus[-1] == "&Help"
    window.window_actions.shortcuts.trigger()
    text = window.help_box.text()
    assert "Ctrl+O" in text and "Open…" in text and "Shift+drop" in text
    window.help_box.close()
    window.window_actions.about.trigger()
    from inspector import __version__

    assert __version__ in window.help_box.text() and "MIT" in window.help_box.text()
    window.help_box.close()


def test_the_first_selection_is_a_differing_matrix_not_a_zero_bias(qtbot, window, tmp_path):
    """A checkpoint whose first differing tensor (in view order) is an all-zero bias drew one bar
    at 0 as the first plot; the first differing weight matrix is selected instead."""
    rng = np.random.default_rng(0)
    path = tmp_path / "m.safetensors"
    save_arrays(
        path,
        [
            ("classifier.bias", DTYPES["F64"], np.zeros(3)),
            ("classifier.weight", DTYPES["F64"], rng.standard_normal((3, 8))),
            ("fc1.bias", DTYPES["F64"], np.zeros(8)),
        ],
    )
    with qtbot.waitSignal(window.details_ready, timeout=20_000):
        window.open_path(str(path))
    assert window.session.current.name == "classifier.weight"


def test_the_files_metadata_is_shown_in_its_tab(qtbot, window, tmp_path):
    path = tmp_path / "m.safetensors"
    save_arrays(
        path,
        [("w", DTYPES["F32"], np.ones(2, np.float32))],
        metadata={"format": "pt", "note": "x" * 5000},
    )
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(path))
    tabs = window.tensor_page.plots_tabs
    panel = tabs.metadata_panel
    assert tabs.isTabVisible(tabs.indexOf(panel))
    tree = panel.tree
    rows = {tree.topLevelItem(i).text(0): tree.topLevelItem(i).text(1) for i in range(2)}
    assert rows["format"] == "pt" and len(rows["note"]) == 2001  # clipped, with an ellipsis
    assert "__metadata__" in panel.caption.text() and "2 entries" in panel.caption.text()
