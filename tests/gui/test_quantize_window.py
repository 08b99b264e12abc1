"""Quantize… in the window: the six schemes measured off the GUI thread, a row's errors in the
precision tab, Save writing what the CLI writes, and a preview of another checkpoint dropped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inspector.core.quantize.schemes import SCHEMES
from tests.core.quantize.models import llama_folder
from tests.gui.waits import wait_ms
from tests.safetensors_bytes import tensor_bytes


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return llama_folder(tmp_path / "llama")


def open_model(qtbot, window, path: Path) -> None:
    with qtbot.waitSignal(window.loaded, timeout=wait_ms(20_000)):
        window.open_path(str(path))


def previewed(qtbot, window):
    qc = window.quantize_controller
    with qtbot.waitSignal(qc.preview_done, timeout=wait_ms(60_000)):
        dlg = qc.open_dialog()
    assert dlg is not None
    return dlg


def test_the_dialog_shows_each_scheme_and_the_precision_tab_follows_the_click(
    qtbot, window, model
) -> None:
    open_model(qtbot, window, model)
    dlg = previewed(qtbot, window)
    rows = {dlg.table.item(r, 0).text(): r for r in range(dlg.table.rowCount())}
    assert list(rows) == list(SCHEMES)
    w4 = window.session.preview.report("W4A16")
    r = rows["W4A16"]
    assert dlg.table.item(r, 2).text() == f"{w4.median_sqnr_db:.1f} dB"
    assert dlg.table.item(r, 4).text().splitlines() == [
        f"{w.name.removeprefix('model.').removesuffix('.weight')}  {w.sqnr_db:.1f} dB"
        for w in w4.worst()
    ]
    # the first scheme is chosen at once, and its errors are in the precision tab
    tabs = window.tensor_page.plots_tabs
    assert window.session.preview.shown == "FP8_DYNAMIC"
    assert tabs.currentWidget() is tabs.precision_panel and tabs.isVisible()
    assert "FP8_DYNAMIC would write" in tabs.precision_panel.caption.text()
    dlg.table.selectRow(r)
    assert window.session.preview.shown == "W4A16"
    assert "W4A16 would write" in tabs.precision_panel.caption.text()
    assert tabs.tabText(1) == "Precision lost (W4A16 preview)"
    assert list(tabs.precision_plot.values) == [w.figures.rel_fro_err for w in w4.weights]
    dlg.reject()


def test_save_writes_what_the_cli_writes(qtbot, window, model, tmp_path) -> None:
    from inspector.cli.dispatch import main as cli_main

    open_model(qtbot, window, model)
    dlg = previewed(qtbot, window)
    dlg.table.selectRow(list(SCHEMES).index("NVFP4A16"))
    assert dlg.out_edit.text() == f"{model}-NVFP4A16"
    dlg.out_edit.setText(str(tmp_path / "win"))
    qc = window.quantize_controller
    with qtbot.waitSignal(qc.quantize_done, timeout=wait_ms(60_000)) as blocker:
        dlg.save_button.click()
    assert blocker.args[0].scheme == "NVFP4A16"
    assert (
        cli_main(["quantize", str(model), "--scheme", "NVFP4A16", "-o", str(tmp_path / "cli")]) == 0
    )
    assert sorted(os.listdir(tmp_path / "win")) == sorted(os.listdir(tmp_path / "cli"))
    assert tensor_bytes(tmp_path / "win" / "model.safetensors") == tensor_bytes(
        tmp_path / "cli" / "model.safetensors"
    )
    assert "Saved win in" in window.message_bar.text


def test_a_preview_of_a_checkpoint_no_longer_shown_is_dropped(
    qtbot, window, model, tmp_path
) -> None:
    other = llama_folder(tmp_path / "other", seed=3)
    open_model(qtbot, window, model)
    qc = window.quantize_controller
    shown = window.session.checkpoint
    from inspector.core.progress import run_job
    from inspector.core.quantize.preview import preview_checkpoint

    reports = run_job(preview_checkpoint(shown, list(SCHEMES.values())))
    open_model(qtbot, window, other)
    qc._on_preview(reports, shown, ("lm_head",))  # the job's answer arrives after the open
    assert window.session.preview is None
    assert not window.tensor_page.plots_tabs.isTabVisible(1)


def test_a_cancelled_preview_shows_nothing_and_says_so(qtbot, window, tmp_path) -> None:
    big = llama_folder(tmp_path / "big", layers=6, hidden=512, inter=1024)
    open_model(qtbot, window, big)
    qc = window.quantize_controller
    with qtbot.waitSignal(window.runner.sig_job_progress, timeout=wait_ms(20_000)):
        dlg = qc.open_dialog()
    with qtbot.waitSignal(window.runner.sig_idle, timeout=wait_ms(20_000)):
        window.cancel_job()
    assert window.session.preview is None
    assert dlg.status.text() == "<b>Measuring cancelled.</b>"
    assert not dlg.save_button.isEnabled() and dlg.table.isEnabled()


def test_worker_processes_measure_what_threads_measure_and_a_cancel_stops_them(
    qtbot, window, model, tmp_path, monkeypatch
) -> None:
    """The installed app lets a large preview run in worker processes (forced here): the
    dialog shows the same figures, and Cancel leaves no process behind."""
    import multiprocessing

    from inspector.core.cast.worker_policy import PROCESSES_ENV

    def figures() -> list:  # type: ignore[type-arg]
        return [[w.figures.rel_fro_err for w in window.session.preview.report(s).weights]
                for s in SCHEMES]  # fmt: skip

    open_model(qtbot, window, model)
    previewed(qtbot, window).reject()
    threads = figures()
    monkeypatch.setenv(PROCESSES_ENV, "2")
    open_model(qtbot, window, model)
    previewed(qtbot, window).reject()
    assert figures() == threads and len(threads[0]) == 7
    big = llama_folder(tmp_path / "big", layers=6, hidden=512, inter=1024)
    open_model(qtbot, window, big)
    with qtbot.waitSignal(window.runner.sig_job_progress, timeout=wait_ms(20_000)):
        window.quantize_controller.open_dialog()
    qtbot.waitUntil(lambda: bool(multiprocessing.active_children()), timeout=wait_ms(20_000))
    with qtbot.waitSignal(window.runner.sig_idle, timeout=wait_ms(20_000)):
        window.cancel_job()
    qtbot.waitUntil(lambda: not multiprocessing.active_children(), timeout=wait_ms(5_000))
    assert window.session.preview is None


def test_closing_the_dialog_while_measuring_then_cancelling_is_quiet(
    qtbot, window, tmp_path
) -> None:
    big = llama_folder(tmp_path / "big", layers=6, hidden=512, inter=1024)
    open_model(qtbot, window, big)
    qc = window.quantize_controller
    with qtbot.waitSignal(window.runner.sig_job_progress, timeout=wait_ms(20_000)):
        dlg = qc.open_dialog()
    dlg.reject()  # Qt deletes it; the cancel's answer must not call into it
    qtbot.wait(50)
    with qtbot.waitSignal(window.runner.sig_idle, timeout=wait_ms(20_000)):
        window.cancel_job()
    assert window.session.preview is None


def test_opening_another_checkpoint_closes_the_dialog_and_its_save_writes_nothing(
    qtbot, window, model, tmp_path
) -> None:
    open_model(qtbot, window, model)
    dlg = previewed(qtbot, window)
    measured = dlg.ckpt
    import shiboken6

    open_model(qtbot, window, llama_folder(tmp_path / "other", seed=5))
    qtbot.waitUntil(lambda: not shiboken6.isValid(dlg) or not dlg.isVisible())
    out = tmp_path / "q"
    assert (
        window.quantize_controller.start_quantize("W4A16", str(out), ("lm_head",), measured) is None
    )
    assert not out.exists() and "nothing was written" in window.message_bar.text
