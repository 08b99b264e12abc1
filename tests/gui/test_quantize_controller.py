"""Quantize…'s controller, with no MainWindow: what it says when a quantized model is saved, fails
or is cancelled, when the model shown changed under it, and how it feeds the dialog (a preview
made already is reused; a failed one is said in the dialog, or in the message bar without it)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from inspector.core.quantize.schemes import SCHEMES
from inspector.core.wording import format_bytes
from tests.core.quantize.models import llama_folder
from tests.gui.waits import wait_ms

ANOTHER = "Another checkpoint is shown now; nothing was written. Open Quantize… again."


@pytest.fixture
def parts(qtbot, controller_parts):
    """(session, window controller, quantize controller, page)."""
    from inspector.gui.quantize_controller import QuantizeController

    session, window, _cast, page = controller_parts
    qc = QuantizeController(session, window.runner, window.views, parent=page)
    return session, window, qc, page


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return llama_folder(tmp_path / "llama")


def _open(qtbot, window, path: Path) -> None:
    with qtbot.waitSignal(window.loaded, timeout=wait_ms(20_000)):
        window.open_path(str(path))


def test_a_saved_model_says_what_it_wrote_and_offers_to_open_it(
    qtbot, parts, model: Path, tmp_path: Path
):
    _session, window, qc, _page = parts
    _open(qtbot, window, model)
    out = tmp_path / "q"
    with qtbot.waitSignal(qc.quantize_done, timeout=wait_ms(60_000)) as done:
        assert qc.start_quantize("W4A16", str(out), ("lm_head",)) is not None
    report = done.args[0]
    assert report.scheme == "W4A16" and len(report.weights) == 7
    bar = window.views.message_bar
    said = re.fullmatch(r"Saved q in (\d+\.\d) s: 7 weights quantized with W4A16, (.+)\.", bar.text)
    assert said is not None, bar.text
    assert float(said.group(1)) < 600 and said.group(2) == format_bytes(report.bytes_out)
    assert bar.kind == "ok" and bar.action.text() == "Open the saved model"
    with qtbot.waitSignal(qc.open_requested) as asked:
        bar.action.click()
    assert asked.args == [str(out)]


def test_a_failed_save_says_nothing_was_written(qtbot, parts, model: Path, tmp_path: Path):
    _session, window, qc, _page = parts
    _open(qtbot, window, model)
    out = tmp_path / "missing" / "q"
    with qtbot.waitSignal(qc.quantize_failed, timeout=wait_ms(60_000)) as failed:
        qc.start_quantize("FP8_DYNAMIC", str(out), ())
    msg = failed.args[0]
    assert msg == f"{out}: folder {out.parent} does not exist"
    bar = window.views.message_bar
    assert bar.text == f"Quantize failed, nothing was written: {msg}" and bar.kind == "error"
    assert not out.parent.exists()


def test_a_cancelled_save_says_nothing_was_written(qtbot, parts, tmp_path: Path):
    _session, window, qc, _page = parts
    big = llama_folder(tmp_path / "big", layers=6, hidden=512, inter=1024)
    _open(qtbot, window, big)
    out = tmp_path / "q"
    with qtbot.waitSignal(window.runner.sig_idle, timeout=wait_ms(60_000)):
        assert qc.start_quantize("W8A16", str(out), ()) is not None
        window.runner.cancel()
    assert window.views.status_bar.currentMessage() == "Quantize cancelled: nothing was written."
    assert not out.exists()


def test_a_save_of_a_model_no_longer_shown_writes_nothing_and_says_so(
    qtbot, parts, model: Path, tmp_path: Path
):
    session, window, qc, _page = parts
    out = tmp_path / "q"
    bar = window.views.message_bar
    assert qc.start_quantize("W4A16", str(out), ()) is None  # nothing open
    assert bar.text == ANOTHER and bar.kind == "error"
    _open(qtbot, window, model)
    measured = session.checkpoint
    _open(qtbot, window, llama_folder(tmp_path / "other", seed=5))
    assert qc.start_quantize("W4A16", str(out), (), measured) is None
    assert bar.text == ANOTHER and not out.exists()
    # the checkpoint shown, named or not, is quantized
    with qtbot.waitSignal(qc.quantize_done, timeout=wait_ms(60_000)):
        assert qc.start_quantize("W8A16", str(out), (), session.checkpoint) is not None
    assert out.is_dir()


def test_the_dialog_reuses_a_preview_of_the_same_ignore_list(qtbot, parts, model: Path):
    session, window, qc, page = parts
    assert qc.open_dialog() is None  # nothing open
    _open(qtbot, window, model)
    with qtbot.waitSignal(qc.preview_done, timeout=wait_ms(60_000)) as done:
        dlg = qc.open_dialog()
        assert dlg is not None and dlg.isVisible() and dlg.parent() is window.views.dialog_parent
        assert dlg.status.text() == "Measuring the six schemes… (progress below)"
        assert not dlg.table.isEnabled()
        assert qc.open_dialog() is None  # one job at a time
    reports = done.args[0]
    assert [r.scheme for r in reports] == list(SCHEMES)
    assert session.preview.reports == reports and session.preview.ignore == ("lm_head",)
    assert dlg.status.text().startswith("7 Linear weights measured, 1 left as they are; ")
    tabs = page.plots_tabs
    assert tabs.currentWidget() is tabs.precision_panel
    assert "FP8_DYNAMIC would write" in tabs.precision_panel.caption.text()
    dlg.reject()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=wait_ms(5000))
    # opened again with the same ignore list: the rows at once, no second measurement
    started: list[str] = []
    window.runner.sig_job_started.connect(started.append)
    again = qc.open_dialog()
    assert again is not None and again.table.item(0, 1).text() != "—"
    assert again.status.text().startswith("7 Linear weights measured")
    qtbot.wait(200)
    assert started == []
    # another ignore list is measured again
    with qtbot.waitSignal(qc.preview_done, timeout=wait_ms(60_000)) as remeasured:
        again.ignore_edit.setText("lm_head, *.q_proj")
        again.ignore_edit.editingFinished.emit()
    assert session.preview.ignore == ("lm_head", "*.q_proj")
    q_proj = "model.layers.0.self_attn.q_proj.weight"  # measured with that list, not the default
    assert all(q_proj in {s.name for s in r.skipped} for r in remeasured.args[0])
    assert started == ["Measuring six quantization schemes"]
    # Save in the dialog writes the scheme chosen, into the folder given
    out = Path(window.session.checkpoint.path).parent / "saved"
    again.out_edit.setText(str(out))
    with qtbot.waitSignal(qc.quantize_done, timeout=wait_ms(60_000)) as saved:
        again.save_button.click()
    assert saved.args[0].scheme == "FP8_DYNAMIC" and out.is_dir()
    assert "model.layers.0.self_attn.q_proj.weight" in {s.name for s in saved.args[0].skipped}


def test_a_failed_preview_is_said_in_the_dialog_or_in_the_message_bar(qtbot, parts, model: Path):
    session, window, qc, _page = parts
    _open(qtbot, window, model)
    weights = Path(session.checkpoint.path)
    weights = weights if weights.is_file() else weights / "model.safetensors"
    os.truncate(weights, 300)
    with qtbot.waitSignal(window.runner.sig_idle, timeout=wait_ms(60_000)):
        dlg = qc.open_dialog()
    said = dlg.status.text()
    assert re.fullmatch(r"<b>.*file was truncated on disk since it was opened; reopen it</b>", said)
    assert dlg.table.isEnabled() and not dlg.save_button.isEnabled()
    assert session.preview is None
    dlg.reject()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=wait_ms(5000))
    # no dialog: the message bar says it
    with qtbot.waitSignal(window.runner.sig_idle, timeout=wait_ms(60_000)):
        assert qc.start_preview(("lm_head",)) is not None
    bar = window.views.message_bar
    assert bar.kind == "error" and bar.text == said.removeprefix("<b>").removesuffix("</b>")


def test_opening_another_model_closes_the_dialog_and_drops_the_preview_tab(
    qtbot, parts, model: Path, tmp_path: Path
):
    session, window, qc, page = parts
    _open(qtbot, window, model)
    with qtbot.waitSignal(qc.preview_done, timeout=wait_ms(60_000)):
        dlg = qc.open_dialog()
    tabs = page.plots_tabs
    assert tabs.isTabVisible(1)
    _open(qtbot, window, llama_folder(tmp_path / "other", seed=5))
    import shiboken6

    assert not shiboken6.isValid(dlg) or not dlg.isVisible()
    assert session.preview is None and not tabs.isTabVisible(1)
    assert qc.start_preview(()) is not None  # the model shown is measured
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=wait_ms(60_000))


def test_what_the_controller_says_is_chinese_in_zh_cn(
    qtbot, zh_cn, parts, model: Path, tmp_path: Path
):
    """Each message in zh_CN: a string looked up under another context stays English."""
    session, window, qc, _page = parts
    bar, labels = window.views.message_bar, []
    window.runner.sig_job_started.connect(labels.append)
    assert qc.start_quantize("W4A16", str(tmp_path / "q"), ()) is None
    assert bar.text == "当前显示的已是另一个 checkpoint；没有写入任何文件。请重新打开“量化…”。"
    _open(qtbot, window, model)
    with qtbot.waitSignal(qc.quantize_done, timeout=wait_ms(60_000)):
        qc.start_quantize("W4A16", str(tmp_path / "q"), ("lm_head",))
    assert re.fullmatch(r"已保存 q，用时 \d+\.\d 秒：7 个权重以 W4A16 量化，.+。", bar.text), (
        bar.text
    )
    assert bar.action.text() == "打开保存的模型"
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=wait_ms(5000))
    out = tmp_path / "missing" / "q"
    with qtbot.waitSignal(qc.quantize_failed, timeout=wait_ms(60_000)) as failed:
        qc.start_quantize("W4A16", str(out), ())
    assert bar.text == f"量化失败，没有写入任何文件：{failed.args[0]}"
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=wait_ms(5000))
    big = llama_folder(tmp_path / "big", layers=6, hidden=512, inter=1024)
    _open(qtbot, window, big)
    with qtbot.waitSignal(window.runner.sig_idle, timeout=wait_ms(60_000)):
        qc.start_quantize("W8A16", str(tmp_path / "q8"), ())
        window.runner.cancel()
    assert window.views.status_bar.currentMessage() == "量化已取消：没有写入任何文件。"
    with qtbot.waitSignal(window.runner.sig_job_progress, timeout=wait_ms(20_000)):
        dlg = qc.open_dialog()
    with qtbot.waitSignal(window.runner.sig_idle, timeout=wait_ms(20_000)):
        window.runner.cancel()
    assert dlg.status.text() == "<b>测量已取消。</b>"
    assert labels == [
        "正在量化为 W4A16",
        "正在量化为 W4A16",
        "正在量化为 W8A16",
        "正在测量六种量化方案",
    ]


def test_a_preview_brings_its_plot_forward_over_the_hint(qtbot, parts, tmp_path: Path):
    """F32 weights under a bfloat16 config: the hint tab shows and is current; a preview's plot
    then comes forward (with the hint alone hidden, Qt made it current by itself)."""
    _session, window, qc, page = parts
    _open(qtbot, window, llama_folder(tmp_path / "f32", dtype="F32"))
    tabs = page.plots_tabs
    assert tabs.currentWidget() is tabs.hint
    with qtbot.waitSignal(qc.preview_done, timeout=wait_ms(60_000)):
        dlg = qc.open_dialog()
    assert tabs.currentWidget() is tabs.precision_panel
    dlg.reject()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=wait_ms(5000))
