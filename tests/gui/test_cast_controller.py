"""Cast & Save's controller, with no MainWindow: what it says when a cast is saved, fails or is
cancelled, and what the dialog proposes (the keep patterns it remembers and suggests)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtWidgets import QMessageBox

from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.gui.tensor_columns import Col
from tests.gui.waits import wait_ms


def _open(qtbot, window, path: Path) -> None:
    with qtbot.waitSignal(window.loaded, timeout=wait_ms(20_000)):
        window.open_path(str(path))


def test_a_saved_cast_says_what_it_wrote_and_offers_to_open_it(
    qtbot, controller_parts, model_file: Path, tmp_path: Path
):
    session, window, cast, page = controller_parts
    bar = cast.views.message_bar
    _open(qtbot, window, model_file)
    out = tmp_path / "out.safetensors"
    with qtbot.waitSignal(cast.cast_done, timeout=wait_ms(30_000)) as done:
        cast.start_cast(str(out), DTYPES["F16"], ())
    report = done.args[0]
    changed = [r for r in report.tensors if r.from_ != r.to]
    lossless = [r for r in changed if r.lossless]
    assert len(changed) == 20 and 0 < len(lossless) < len(changed)
    said = re.fullmatch(
        rf"Saved out\.safetensors in (\d+\.\d) s: 20 tensors cast to F16, {len(lossless)} of "
        r"them lossless\.",
        bar.text,
    )
    assert said is not None, bar.text
    assert float(said.group(1)) < 600  # the time since the job started
    # the page shows the measured errors: a column, the cells, the precision tab
    by_name = {r.name: r for r in report.tensors}
    f64 = by_name["encoder.layer.1.attention.self.query.weight"]
    assert f64.from_ == "F64" and f64.max_rel_err > 0
    assert not page.table.isColumnHidden(Col.CAST_ERR)
    row = page.model.row_of(f64.name)
    assert page.model.index(row, Col.CAST_ERR).data() == f"{f64.max_rel_err:.3g}"
    assert page.plots_tabs.currentWidget() is page.plots_tabs.precision_panel
    idx = [t.name for t in session.checkpoint.tensors].index(f64.name)
    assert page.plots_tabs.precision_plot.values[idx] == pytest.approx(f64.max_rel_err)
    assert bar.kind == "ok" and bar.action.text() == "Open the saved file"
    with qtbot.waitSignal(cast.open_requested) as asked:
        bar.action.click()
    assert asked.args == [str(out)]


def test_a_failed_cast_says_what_could_not_be_saved_and_that_nothing_was_written(
    qtbot, controller_parts, model_file: Path, tmp_path: Path
):
    _session, window, cast, _page = controller_parts
    _open(qtbot, window, model_file)
    missing = tmp_path / "no" / "x.safetensors"
    with qtbot.waitSignal(cast.cast_failed, timeout=wait_ms(10_000)) as failed:
        cast.start_cast(str(missing), DTYPES["F16"], ())
    msg = failed.args[0]
    assert msg == f"{missing}: folder {missing.parent} does not exist"
    box = cast.error_box
    assert box.isVisible() and box.parent() is cast.views.dialog_parent
    assert box.icon() == QMessageBox.Icon.Critical
    assert box.windowTitle() == "Cast failed"
    assert box.text() == f"Could not save {msg}"
    assert box.informativeText() == "Nothing was written."
    box.close()  # and it goes: deleted on close
    qtbot.waitUntil(lambda: not shiboken6.isValid(box), timeout=wait_ms(5000))
    assert not missing.parent.exists()


def test_a_cancelled_cast_says_nothing_was_written(
    qtbot, controller_parts, big_file: Path, tmp_path: Path
):
    _session, window, cast, _page = controller_parts
    _open(qtbot, window, big_file)
    out = tmp_path / "big.F16.safetensors"
    with qtbot.waitSignal(cast.cast_cancelled, timeout=wait_ms(30_000)):
        assert cast.start_cast(str(out), DTYPES["F16"], ()) is not None
        cast.runner.cancel()
    status = cast.views.status_bar
    assert status.currentMessage() == "Cast cancelled: nothing was written."
    assert not out.exists()


def test_no_second_cast_or_dialog_while_one_runs_or_before_a_file_is_open(
    qtbot, controller_parts, big_file: Path, tmp_path: Path, settings
):
    from inspector.session import KeepGlobs

    _session, window, cast, _page = controller_parts
    keep = KeepGlobs(settings)
    assert cast.open_dialog(keep) is None  # nothing open
    assert cast.start_cast(str(tmp_path / "a.safetensors"), DTYPES["F16"], ()) is None
    _open(qtbot, window, big_file)
    with qtbot.waitSignal(cast.cast_cancelled, timeout=wait_ms(30_000)):
        assert cast.start_cast(str(tmp_path / "b.safetensors"), DTYPES["F16"], ()) is not None
        assert cast.start_cast(str(tmp_path / "c.safetensors"), DTYPES["F16"], ()) is None
        assert cast.open_dialog(keep) is None
        cast.runner.cancel()
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".safetensors") == [
        "big.safetensors"
    ]


def test_the_dialog_suggests_the_fp32_norms_then_remembers_the_patterns_used_per_file(
    qtbot, controller_parts, model_file: Path, tmp_path: Path, settings
):
    """A cast to BF16 would cast the F32 LayerNorm: the dialog starts with the fp32-norms
    globs (the fix `check` suggests); to F32 it starts empty. The patterns a cast used are the
    file's from then on."""
    from PySide6.QtWidgets import QDialogButtonBox

    from inspector.core.model_folder.intended import FP32_NORMS
    from inspector.session import KeepGlobs

    session, window, cast, _page = controller_parts
    keep = KeepGlobs(settings)
    _open(qtbot, window, model_file)
    dlg = cast.open_dialog(keep)
    assert dlg is cast.dialog and dlg.isVisible() and dlg.keep_edit.text() == ""
    assert dlg.parent() is cast.views.dialog_parent
    dlg.reject()
    session.set_target(DTYPES["BF16"])
    dlg = cast.open_dialog(keep)
    assert dlg.keep_edit.text() == " ".join(FP32_NORMS)
    dlg.keep_edit.setText("*inv_freq")
    dlg.out_edit.setText(str(tmp_path / "out.safetensors"))
    with qtbot.waitSignal(cast.cast_done, timeout=wait_ms(30_000)):
        dlg.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    written = {
        t.name: t.dtype.name for t in open_checkpoint(str(tmp_path / "out.safetensors")).tensors
    }
    assert written["encoder.rotary.inv_freq"] == "F64"  # kept by the pattern
    assert written["embeddings.LayerNorm.weight"] == "BF16"
    assert keep.get(str(model_file)) == "*inv_freq"
    qtbot.waitUntil(lambda: not cast.runner.busy, timeout=wait_ms(5000))
    dlg = cast.open_dialog(keep)
    assert dlg.keep_edit.text() == "*inv_freq"
    dlg.reject()


def test_a_cast_of_a_file_no_longer_shown_says_so_and_offers_its_output(
    qtbot, controller_parts, big_file: Path, model_file: Path, tmp_path: Path
):
    session, window, cast, page = controller_parts
    _open(qtbot, window, big_file)
    out = tmp_path / "big.F32.safetensors"
    with qtbot.waitSignal(cast.cast_done, timeout=wait_ms(60_000)):
        cast.start_cast(str(out), DTYPES["F32"], ())
        _open(qtbot, window, model_file)
    bar = cast.views.message_bar
    assert bar.text == "Saved big.F32.safetensors (cast of a checkpoint no longer shown)."
    assert bar.kind == "ok" and bar.action.text() == "Open the saved file"
    assert session.cast is None and page.table.isColumnHidden(Col.CAST_ERR)
    with qtbot.waitSignal(cast.open_requested) as asked:
        bar.action.click()
    assert asked.args == [str(out)]


def test_what_the_controller_says_is_chinese_in_zh_cn(
    qtbot, zh_cn, controller_parts, model_file: Path, big_file: Path, tmp_path: Path
):
    """Each message in zh_CN: a string looked up under another context stays English."""
    _session, window, cast, _page = controller_parts
    labels: list[str] = []
    cast.runner.sig_job_started.connect(labels.append)
    _open(qtbot, window, model_file)
    with qtbot.waitSignal(cast.cast_done, timeout=wait_ms(30_000)):
        cast.start_cast(str(tmp_path / "out.safetensors"), DTYPES["F16"], ())
    bar = cast.views.message_bar
    assert labels == ["正在转换为 F16"]
    assert re.fullmatch(
        r"已保存 out\.safetensors，用时 \d+\.\d 秒：20 个张量转换为 F16，其中 \d+ 个无损。",
        bar.text,
    ), bar.text
    assert bar.action.text() == "打开保存的文件"
    qtbot.waitUntil(lambda: not cast.runner.busy, timeout=wait_ms(5000))

    missing = tmp_path / "no" / "x.safetensors"
    with qtbot.waitSignal(cast.cast_failed, timeout=wait_ms(10_000)) as failed:
        cast.start_cast(str(missing), DTYPES["F16"], ())
    box = cast.error_box
    assert box.windowTitle() == "转换失败"
    assert box.text() == f"无法保存 {failed.args[0]}"
    assert box.informativeText() == "没有写入任何文件。"
    box.close()
    qtbot.waitUntil(lambda: not cast.runner.busy, timeout=wait_ms(5000))

    _open(qtbot, window, big_file)
    with qtbot.waitSignal(cast.cast_cancelled, timeout=wait_ms(30_000)):
        cast.start_cast(str(tmp_path / "big.F16.safetensors"), DTYPES["F16"], ())
        cast.runner.cancel()
    assert cast.views.status_bar.currentMessage() == "转换已取消：没有写入任何文件。"
    qtbot.waitUntil(lambda: not cast.runner.busy, timeout=wait_ms(5000))

    out = tmp_path / "big.F32.safetensors"
    with qtbot.waitSignal(cast.cast_done, timeout=wait_ms(60_000)):
        cast.start_cast(str(out), DTYPES["F32"], ())
        _open(qtbot, window, model_file)
    assert bar.text == "已保存 big.F32.safetensors（转换的 checkpoint 已不在当前窗口中）。"
    assert bar.action.text() == "打开保存的文件"


def test_the_patterns_of_a_model_folder_are_remembered_under_the_folder_opened(
    qtbot, controller_parts, tmp_path: Path, settings
):
    from PySide6.QtWidgets import QDialogButtonBox

    from inspector.session import KeepGlobs
    from tests.core.quantize.models import llama_folder

    session, window, cast, _page = controller_parts
    folder = llama_folder(tmp_path / "llama")
    keep = KeepGlobs(settings)
    _open(qtbot, window, folder)
    assert session.path == str(folder) and session.checkpoint.path != str(folder)
    dlg = cast.open_dialog(keep)
    dlg.keep_edit.setText("*norm*")
    dlg.out_edit.setText(str(tmp_path / "out"))  # a folder, as the source
    with qtbot.waitSignal(cast.cast_done, timeout=wait_ms(30_000)):
        dlg.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    assert keep.get(str(folder)) == "*norm*"
    qtbot.waitUntil(lambda: not cast.runner.busy, timeout=wait_ms(5000))
    _open(qtbot, window, folder)
    dlg = cast.open_dialog(keep)
    assert dlg.keep_edit.text() == "*norm*"
    dlg.reject()


def test_the_dialog_suggests_keeping_the_configs_modules_not_to_convert(
    qtbot, controller_parts, tmp_path: Path, settings
):
    """config.json's modules_to_not_convert (a router gate kept in F32) join the fp32-norms
    globs: a cast to BF16 would otherwise cast the gate."""
    import json

    import numpy as np

    from inspector.core.model_folder.intended import FP32_NORMS
    from inspector.core.save.writer import save_arrays
    from inspector.session import KeepGlobs

    session, window, cast, page = controller_parts
    folder = tmp_path / "moe"
    folder.mkdir()
    rng = np.random.default_rng(2)
    save_arrays(
        folder / "model.safetensors",
        [
            ("model.layers.0.mlp.gate.weight", DTYPES["F32"], rng.random((4, 8), np.float32)),
            ("lm_head.weight", DTYPES["F32"], rng.random((4, 8), np.float32)),
            ("model.layers.0.mlp.up_proj.weight", DTYPES["BF16"],
             rng.random((8, 8)).astype(DTYPES["BF16"].numpy)),
        ],
    )  # fmt: skip
    config = {
        "torch_dtype": "bfloat16",
        "quantization_config": {"modules_to_not_convert": ["gate", "lm_head"]},
    }
    (folder / "config.json").write_text(json.dumps(config))
    _open(qtbot, window, folder)
    assert session.target is DTYPES["BF16"]
    model = page.model  # the table says the same: lm_head is F32 on purpose, not a mistake
    status = {
        model.tensor_at(r).name: model.data(model.index(r, Col.STATUS))
        for r in range(model.rowCount())
    }
    assert status["lm_head.weight"] == "on purpose?"
    dlg = cast.open_dialog(KeepGlobs(settings))
    assert dlg.keep_edit.text() == " ".join((*FP32_NORMS, "*gate*", "*lm_head*"))
    dlg.reject()
