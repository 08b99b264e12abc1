"""The window's controller (opening, the target, the reference and the comparison), with no
MainWindow: what it says while it works, when something cannot be opened or compared, and which
actions and tabs it offers in each state."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays
from inspector.gui.plot_tabs import PlotTab
from inspector.gui.tensor_columns import Col
from tests.gui.waits import wait_ms

F32 = DTYPES["F32"]
STILL = " — still showing the previous checkpoint."


def _open(qtbot, window, path: Path) -> None:
    with qtbot.waitSignal(window.loaded, timeout=wait_ms(20_000)):
        window.open_path(str(path))


def _tabs(page) -> set[PlotTab]:
    tabs = page.plots_tabs
    return {t for t in PlotTab if tabs.isTabVisible(t)}


def _actions(window) -> dict[str, bool]:
    a = window.views.actions
    names = ("cast", "quantize", "compare", "clear_reference", "export_table", "export_report")
    return {n: getattr(a, n).isEnabled() for n in names}


def test_opening_says_what_it_opens_then_shows_it(qtbot, controller_parts, model_file: Path):
    session, window, _cast, page = controller_parts
    status, bar = window.views.status_bar, window.views.job_bar
    with qtbot.waitSignal(window.loaded, timeout=wait_ms(20_000)):
        window.open_path(str(model_file))
        assert status.currentMessage() == "Opening model.safetensors…"
        assert bar.progress.isVisibleTo(window.views.dialog_parent)
        assert bar.progress.maximum() == 0  # busy, no figures
    assert status.currentMessage() == ""
    assert not bar.progress.isVisibleTo(window.views.dialog_parent)
    assert session.path == str(model_file)
    assert _actions(window) == {
        "cast": True,
        "quantize": True,
        "compare": True,
        "clear_reference": False,
        "export_table": True,
        "export_report": False,
    }
    # the page: every tensor, no cast or comparison column, the hint (tensors differ from F32)
    assert page.model.rowCount() == 21
    assert page.table.isColumnHidden(Col.CAST_ERR) and page.table.isColumnHidden(Col.REF_DIFF)
    assert PlotTab.HINT in _tabs(page) and PlotTab.DIFF not in _tabs(page)
    current = page.model.tensor_at(page.table.currentIndex().row())
    assert current.name == "classifier.weight"  # the first differing matrix, selected


def test_a_file_that_cannot_be_opened_says_why_and_keeps_what_was_shown(
    qtbot, controller_parts, model_file: Path, tmp_path: Path
):
    session, window, _cast, _page = controller_parts
    bar = window.views.message_bar
    missing = tmp_path / "nope.safetensors"
    with qtbot.waitSignal(window.load_failed, timeout=wait_ms(20_000)) as failed:
        window.open_path(str(missing))
    msg = failed.args[0]
    assert msg == f"{missing}: no such file or folder"
    assert bar.text == f"Could not open {msg}" and bar.kind == "error"
    assert window.views.status_bar.currentMessage() == ""
    _open(qtbot, window, model_file)
    shown = session.checkpoint
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{bad}")
    with qtbot.waitSignal(window.load_failed, timeout=wait_ms(20_000)) as failed:
        window.open_path(str(bad))
    assert bar.text == f"Could not open {failed.args[0]}{STILL}"
    assert session.checkpoint is shown


def test_a_folder_of_several_checkpoints_offers_a_choice(qtbot, controller_parts, tmp_path: Path):
    session, window, _cast, _page = controller_parts
    save_arrays(tmp_path / "a.safetensors", [("x", F32, np.ones(2, np.float32))])
    save_arrays(tmp_path / "b.safetensors", [("y", F32, np.ones(3, np.float32))])
    with qtbot.waitSignal(window.load_failed, timeout=wait_ms(20_000)):
        window.open_path(str(tmp_path))
    dialog = window.choice_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.parent() is window.views.dialog_parent
    assert dialog.windowTitle() == "Open which checkpoint?"
    assert dialog.labelText() == "This folder holds several checkpoints. Open:"
    assert dialog.comboBoxItems() == ["a.safetensors", "b.safetensors"]
    assert not dialog.isComboBoxEditable()
    with qtbot.waitSignal(window.loaded, timeout=wait_ms(20_000)):
        dialog.textValueSelected.emit("b.safetensors")
    assert session.path == str(tmp_path / "b.safetensors")
    assert [t.name for t in session.checkpoint.tensors] == ["y"]


def test_a_comparison_says_what_differs_and_shows_its_column_and_tab(
    qtbot, controller_parts, model_file: Path, f32_file: Path
):
    session, window, _cast, page = controller_parts
    _open(qtbot, window, model_file)
    with qtbot.waitSignal(window.diff_done, timeout=wait_ms(30_000)) as done:
        window.open_reference(str(f32_file))
        assert (
            window.views.status_bar.currentMessage() == "Opening reference model.f32.safetensors…"
        )
    diffs = done.args[0]
    assert session.reference is not None and session.diffs == diffs
    d = session.diff_summary
    assert d.n_unmatched == 0 and d.n_differ > 0
    assert window.views.message_bar.text == (
        f"Compared with model.f32.safetensors: {d.n_differ} differing (worst max |Δ| "
        f"{d.worst_abs:.3g}), {d.n_equal} equal."
    )
    assert window.views.message_bar.kind == "info"
    assert not page.table.isColumnHidden(Col.REF_DIFF)
    assert page.plots_tabs.currentIndex() == PlotTab.DIFF
    caption = page.plots_tabs.diff_panel.caption.text()  # the tab names the reference too
    assert caption.startswith(f"<b>{d.n_differ} differing from model.f32.safetensors</b>")
    assert page.plots_tabs.diff_plot.title == "Max |Δ| per tensor vs model.f32.safetensors"
    assert _actions(window)["clear_reference"] and _actions(window)["export_report"]
    window.clear_reference()
    assert session.reference is None and page.table.isColumnHidden(Col.REF_DIFF)
    assert PlotTab.DIFF not in _tabs(page)
    assert not _actions(window)["clear_reference"] and not _actions(window)["export_report"]


def test_a_comparison_with_other_tensors_counts_the_unmatched(
    qtbot, controller_parts, model_file: Path, tmp_path: Path
):
    session, window, _cast, _page = controller_parts
    other = tmp_path / "other.safetensors"
    save_arrays(
        other,
        [("classifier.bias", F32, np.ones(3, np.float32)), ("extra", F32, np.ones(2, np.float32))],
    )
    _open(qtbot, window, model_file)
    with qtbot.waitSignal(window.diff_done, timeout=wait_ms(30_000)):
        window.open_reference(str(other))
    d = session.diff_summary
    assert d.n_unmatched == 21  # 20 only here, 1 only there
    assert window.views.message_bar.text == (
        f"Compared with other.safetensors: {d.n_differ} differing (worst max |Δ| "
        f"{d.worst_abs:.3g}), {d.n_equal} equal; 21 only in one file or shaped differently."
    )


def test_a_reference_that_cannot_be_opened_says_why(
    qtbot, controller_parts, model_file: Path, tmp_path: Path
):
    session, window, _cast, _page = controller_parts
    window.open_reference(str(tmp_path / "x.safetensors"))  # nothing open: nothing compared
    qtbot.waitUntil(lambda: not window.runner.busy and not window.views.status_bar.currentMessage())
    assert session.reference is None
    _open(qtbot, window, model_file)
    missing = tmp_path / "ref.safetensors"
    with qtbot.waitSignal(window.diff_failed, timeout=wait_ms(20_000)) as failed:
        window.open_reference(str(missing))
    assert failed.args == [f"{missing}: no such file or folder"]
    assert window.views.message_bar.text == (
        f"Could not open the reference {missing}: no such file or folder"
    )
    assert window.views.message_bar.kind == "error" and session.reference is None


def test_opening_another_checkpoint_clears_the_reference_and_offers_it_again(
    qtbot, controller_parts, model_file: Path, f32_file: Path, tmp_path: Path
):
    session, window, _cast, _page = controller_parts
    _open(qtbot, window, model_file)
    with qtbot.waitSignal(window.diff_done, timeout=wait_ms(30_000)):
        window.open_reference(str(f32_file))
    other = tmp_path / "other.safetensors"
    save_arrays(other, [("classifier.bias", F32, np.ones(3, np.float32))])
    _open(qtbot, window, other)
    bar = window.views.message_bar
    assert session.reference is None
    assert bar.text == (
        "The reference model.f32.safetensors was cleared: it was chosen for the previous "
        "checkpoint."
    )
    assert bar.kind == "info" and bar.action.text() == "Compare with model.f32.safetensors again"
    with qtbot.waitSignal(window.diff_done, timeout=wait_ms(30_000)):
        bar.action.click()
    assert session.reference is not None and session.reference.path == str(f32_file)


def test_a_cancelled_comparison_says_so(qtbot, controller_parts, big_file: Path, tmp_path: Path):
    session, window, _cast, _page = controller_parts
    ref = tmp_path / "ref.safetensors"
    rng = np.random.default_rng(9)
    save_arrays(
        ref,
        [(f"layer.{i}.weight", DTYPES["F64"], rng.standard_normal((1024, 1024))) for i in range(8)],
    )
    _open(qtbot, window, big_file)
    with qtbot.waitSignal(window.runner.sig_job_progress, timeout=wait_ms(20_000)):
        window.open_reference(str(ref))
    assert window.views.job_bar.label.text().startswith("Comparing with ref.safetensors")
    window.cancel_job()
    assert window.views.job_bar.label.text() == "Cancelling…"
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=wait_ms(20_000))
    assert window.views.status_bar.currentMessage() == "Comparison cancelled."
    assert session.diffs is None
    assert not window.views.job_bar.label.isVisibleTo(window.views.dialog_parent)
    window.cancel_job()  # nothing runs: nothing to say
    assert window.views.job_bar.label.text() == ""


def test_a_queued_job_is_flashed(qtbot, controller_parts):
    _session, window, _cast, _page = controller_parts
    window.runner.sig_job_queued.emit("Statistics")
    assert window.views.status_bar.currentMessage() == "Statistics: waits for the running job"


def test_the_chosen_target_is_the_sessions_and_is_remembered(
    qtbot, controller_parts, model_file: Path, settings, tmp_path: Path
):
    from tests.core.quantize.models import llama_folder

    session, window, _cast, page = controller_parts
    box = window.views.target_box
    box.currentTextChanged.connect(window.set_target)  # as the window connects it
    _open(qtbot, window, model_file)
    window.set_target("f16")
    assert session.target is DTYPES["F16"] and settings.value("target") == "F16"
    assert box.currentText() == "F16"
    row = page.model.row_of("encoder.layer.1.attention.self.query.weight")
    assert page.model.index(row, Col.STATUS).data() == "F64 → F16"
    # a model folder whose config.json says bfloat16: its entry comes first, the choice stays
    _open(qtbot, window, llama_folder(tmp_path / "llama"))
    assert box.itemText(0) == "BF16 — from config.json" and box.itemData(0) == "config"
    assert session.target is DTYPES["F16"] and box.currentText() == "F16"
    box.setCurrentIndex(0)  # "from config.json": the config's dtype again
    assert session.target is DTYPES["BF16"] and box.currentIndex() == 0
    assert settings.value("target") == "F16"  # the remembered choice is the person's last


def test_what_the_controller_says_is_chinese_in_zh_cn(
    qtbot, zh_cn, controller_parts, model_file: Path, f32_file: Path, big_file: Path, tmp_path: Path
):
    """Each message in zh_CN: a string looked up under another context stays English."""
    session, window, _cast, _page = controller_parts
    views, bar = window.views, window.views.message_bar
    missing = tmp_path / "nope.safetensors"
    with qtbot.waitSignal(window.load_failed, timeout=wait_ms(20_000)):
        window.open_path(str(missing))
        assert views.status_bar.currentMessage() == "正在打开 nope.safetensors…"
    assert bar.text == f"无法打开 {missing}: no such file or folder"
    _open(qtbot, window, model_file)
    with qtbot.waitSignal(window.load_failed, timeout=wait_ms(20_000)):
        window.open_path(str(missing))
    assert bar.text == f"无法打开 {missing}: no such file or folder — 仍显示之前的 checkpoint。"
    with qtbot.waitSignal(window.diff_failed, timeout=wait_ms(20_000)):
        window.open_reference(str(missing))
        assert views.status_bar.currentMessage() == "正在打开参考文件 nope.safetensors…"
    assert bar.text == f"无法打开参考文件 {missing}: no such file or folder"
    other = tmp_path / "other.safetensors"
    save_arrays(other, [("classifier.bias", F32, np.ones(3, np.float32))])
    with qtbot.waitSignal(window.diff_done, timeout=wait_ms(30_000)):
        window.open_reference(str(other))
    d = session.diff_summary
    assert bar.text == (
        f"已与 other.safetensors 对比：{d.n_differ} 个张量有差异（最大 |Δ| 为 "
        f"{d.worst_abs:.3g}），{d.n_equal} 个完全相同；20 个只存在于其中一个文件或形状不同。"
    )
    _open(qtbot, window, f32_file)
    assert bar.text == "参考文件 other.safetensors 已清除：它是为上一个 checkpoint 选择的。"
    assert bar.action.text() == "再次与 other.safetensors 对比"
    window.runner.sig_job_queued.emit("统计")
    assert views.status_bar.currentMessage() == "统计：等待正在运行的任务结束"
    save_arrays(tmp_path / "b.safetensors", [("y", F32, np.ones(3, np.float32))])
    with qtbot.waitSignal(window.load_failed, timeout=wait_ms(20_000)):
        window.open_path(str(tmp_path))
    assert window.choice_dialog.windowTitle() == "打开哪个 checkpoint？"
    assert window.choice_dialog.labelText() == "此文件夹包含多个 checkpoint。打开："
    window.choice_dialog.reject()
    ref = tmp_path / "ref" / "ref.safetensors"
    ref.parent.mkdir()
    rng = np.random.default_rng(9)
    save_arrays(
        ref,
        [(f"layer.{i}.weight", DTYPES["F64"], rng.standard_normal((1024, 1024))) for i in range(8)],
    )
    _open(qtbot, window, big_file)
    with qtbot.waitSignal(window.runner.sig_job_progress, timeout=wait_ms(20_000)):
        window.open_reference(str(ref))
    assert window.views.job_bar.label.text().startswith("正在与 ref.safetensors 对比")
    window.cancel_job()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=wait_ms(20_000))
    assert views.status_bar.currentMessage() == "对比已取消。"


def test_clearing_the_reference_cancels_its_running_comparison(
    qtbot, controller_parts, big_file: Path, tmp_path: Path
):
    session, window, _cast, _page = controller_parts
    ref = tmp_path / "ref.safetensors"
    rng = np.random.default_rng(9)
    save_arrays(
        ref,
        [(f"layer.{i}.weight", DTYPES["F64"], rng.standard_normal((1024, 1024))) for i in range(8)],
    )
    _open(qtbot, window, big_file)
    done: list[object] = []
    window.diff_done.connect(done.append)
    with qtbot.waitSignal(window.runner.sig_job_progress, timeout=wait_ms(20_000)):
        window.open_reference(str(ref))
    window.clear_reference()
    assert session.reference is None
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=wait_ms(20_000))
    assert window.views.status_bar.currentMessage() == "Comparison cancelled."
    assert done == [] and session.diffs is None


def test_opening_another_checkpoint_cancels_the_running_comparison(
    qtbot, controller_parts, big_file: Path, model_file: Path, tmp_path: Path
):
    session, window, _cast, _page = controller_parts
    ref = tmp_path / "ref.safetensors"
    rng = np.random.default_rng(9)
    save_arrays(
        ref,
        [(f"layer.{i}.weight", DTYPES["F64"], rng.standard_normal((1024, 1024))) for i in range(8)],
    )
    _open(qtbot, window, big_file)
    done: list[object] = []
    window.diff_done.connect(done.append)
    with qtbot.waitSignal(window.runner.sig_job_progress, timeout=wait_ms(20_000)):
        window.open_reference(str(ref))
    _open(qtbot, window, model_file)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=wait_ms(20_000))
    assert window.views.status_bar.currentMessage() == "Comparison cancelled."
    assert done == [] and session.diffs is None and session.path == str(model_file)


def test_the_hint_follows_the_file_s_layout_and_leaves_when_nothing_differs(
    qtbot, controller_parts, model_file: Path, f32_file: Path
):
    """burn-store's loading line chains PyTorchToBurnAdapter for a safetensors file saved from
    PyTorch, not for one burn saved (its metadata says producer "burn": burn's own names and
    layouts), and the hint tab leaves once no tensor differs from the model dtype. (Mutation
    testing: the file's metadata left out of the line, or the hint shown with nothing
    differing, passed every test.)"""
    _session, window, _cast, page = controller_parts
    hint = page.plots_tabs.hint
    _open(qtbot, window, model_file)
    assert hint.fix.text() == "PyTorchToBurnAdapter.chain(FloatCastAdapter::to(DType::F32))"
    from_burn = model_file.with_name("from_burn.safetensors")
    save_arrays(from_burn, [("w", DTYPES["F64"], np.zeros((2, 2)))], {"producer": "burn"})
    _open(qtbot, window, from_burn)
    assert hint.fix.text() == "FloatCastAdapter::to(DType::F32)"
    _open(qtbot, window, f32_file)  # every float tensor F32 already: nothing to fix
    assert PlotTab.HINT not in _tabs(page)
