"""Cast & save from the window: same bytes as the CLI, cancel, errors, and the precision plots."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

pytest.importorskip("inspector.core.cast.job")

from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.gui.cast_dialog import proposed_output
from inspector.gui.tensor_columns import Col

from .conftest import BF16_NAMES, F64_NAMES


def cast_via_button(qtbot, win, out=None, keep=""):
    win.cast_action.trigger()
    dlg = win.cast_dialog
    assert dlg is not None and dlg.isVisible()
    if out is not None:
        dlg.out_edit.setText(str(out))
    dlg.keep_edit.setText(keep)
    with qtbot.waitSignal(win.cast_done, timeout=30_000) as blocker:
        dlg.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    return blocker.args[0]


def test_dialog_proposes_stem_target_name(loaded, model_file):
    loaded.cast_action.trigger()
    dlg = loaded.cast_dialog
    assert dlg.out_edit.text() == str(model_file.parent / "model.F32.safetensors")
    dlg.target_box.setCurrentText("BF16")
    assert dlg.out_edit.text() == str(model_file.parent / "model.BF16.safetensors")
    assert dlg.plan_label.text().startswith("19 of 21 tensors will be cast to BF16")
    dlg.keep_edit.setText("*inv_freq")
    assert "1 kept by pattern" in dlg.plan_label.text()
    dlg.out_edit.setText(str(model_file))
    ok = dlg.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert not ok.isEnabled()  # would overwrite the input
    dlg.reject()


def test_cast_button_writes_the_same_file_as_the_cli(qtbot, loaded, model_file, tmp_path):
    from inspector.cli.dispatch import main as cli_main

    report = cast_via_button(qtbot, loaded)
    out = model_file.parent / "model.F32.safetensors"
    assert out.is_file()
    assert loaded.cast_output == str(out)
    cli_out = tmp_path / "cli.safetensors"
    assert cli_main(["cast", str(model_file), "--target", "F32", "-o", str(cli_out)]) == 0
    assert out.read_bytes() == cli_out.read_bytes()
    # nothing else left next to it (no temp files)
    assert sorted(p.name for p in model_file.parent.iterdir() if p.is_file()) == [
        "cli.safetensors",
        "model.F32.safetensors",
        "model.safetensors",
        "settings.ini",
    ]
    assert report.target == "F32"
    saved = open_checkpoint(out)
    assert {t.dtype.name for t in saved.tensors} == {"F32", "I64"}


def test_plots_after_cast_hold_the_report(qtbot, loaded, model_file):
    report = cast_via_button(qtbot, loaded)
    by_name = {r.name: r for r in report.tensors}
    plot = loaded.precision_plot
    assert plot.isVisible()
    assert not loaded.table.isColumnHidden(Col.CAST_ERR)
    changed = [r for r in report.tensors if r.from_ != r.to]
    assert {r.name for r in changed} == set(F64_NAMES + BF16_NAMES)
    x, y = plot.lossy_item.getData()
    xl, _ = plot.lossless_item.getData()
    lossy = [r for r in changed if not r.lossless]
    assert len(x) == len(lossy) and len(xl) == len(changed) - len(lossy)
    # BF16 -> F32 is exact, F64 -> F32 is not
    assert by_name[BF16_NAMES[0]].lossless
    assert not by_name[F64_NAMES[0]].lossless
    idx = [t.name for t in loaded.ckpt.tensors].index(F64_NAMES[0])
    assert plot.values[idx] == pytest.approx(by_name[F64_NAMES[0]].max_rel_err)
    assert 0 < by_name[F64_NAMES[0]].max_rel_err < 2**-23
    # the table shows the same number
    r = loaded.model.row_of(F64_NAMES[0])
    assert loaded.model.index(r, Col.CAST_ERR).data() == f"{by_name[F64_NAMES[0]].max_rel_err:.3g}"

    # the selected tensor: before/after histograms overlaid + an error histogram. Select another
    # tensor first: re-selecting the current one (possible after the cast) draws nothing new.
    current = loaded.current_tensor().name if loaded.current_tensor() is not None else None
    via = next(n for n in BF16_NAMES + F64_NAMES if n not in (current, F64_NAMES[1]))
    with qtbot.waitSignal(loaded.details_ready, timeout=10_000, check_params_cb=lambda n: n == via):
        loaded.select_tensor(via)
    with qtbot.waitSignal(
        loaded.details_ready, timeout=10_000, check_params_cb=lambda n: n == F64_NAMES[1]
    ):
        loaded.select_tensor(F64_NAMES[1])
    d = loaded.details
    assert d.histogram.mode == "before_after"
    edges, before = d.histogram.before_item.getData()
    edges2, after = d.histogram.after_item.getData()
    t = loaded.ckpt[F64_NAMES[1]]
    assert before.sum() == after.sum() == t.numel
    assert np.array_equal(edges, edges2)
    src = np.asarray(loaded.ckpt.view(t), np.float64).ravel()
    expect, _ = np.histogram(src, bins=edges)
    assert np.array_equal(before, expect)
    assert d.error_plot.isVisible()
    ex, ec = d.error_plot.item.getData()
    assert len(ex) == len(ec) + 1 and ec.sum() > 0
    assert ex.max() <= -6  # F64 -> F32 relative error is below 2^-24 ≈ 6e-8
    assert "overflow 0 · underflow 0 · NaN 0" in d.field("Cast")


def test_offer_to_open_the_saved_file_shows_no_differing_tensors(qtbot, loaded, model_file):
    cast_via_button(qtbot, loaded)
    bar = loaded.message_bar
    assert bar.kind == "ok" and bar.action.isVisible()
    with qtbot.waitSignal(loaded.loaded, timeout=10_000):
        bar.action.click()
    assert loaded.ckpt.path == str(model_file.parent / "model.F32.safetensors")
    assert loaded.summary.n_differ == 0
    assert loaded.summary_label.text().startswith("✓ 0 of 21 tensors differ from F32")
    assert not loaded.hint.active and not loaded.plots_tabs.isTabVisible(0)


def test_keep_patterns_from_the_dialog(qtbot, loaded, model_file, tmp_path):
    out = tmp_path / "kept.safetensors"
    cast_via_button(qtbot, loaded, out=out, keep="*inv_freq")
    saved = open_checkpoint(out)
    assert saved["encoder.rotary.inv_freq"].dtype.name == "F64"
    assert saved[F64_NAMES[0]].dtype.name == "F32"


def test_cancel_leaves_no_file(qtbot, window, big_file, tmp_path):
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(big_file))
    out = tmp_path / "out" / "big.F16.safetensors"
    out.parent.mkdir()
    from inspector.core.dtypes import DTYPES

    seen, clicked = [], threading.Event()
    w = window.start_cast(str(out), DTYPES["F16"])
    assert window.cancel_button.isVisible()
    w.progress.connect(lambda p: seen.append(p) or window.cancel_button.click() or clicked.set())
    # the job waits for that click: on a busy machine it could finish first (cast_done instead)
    w.progress.connect(lambda p: clicked.wait(20), Qt.ConnectionType.DirectConnection)
    with qtbot.waitSignal(window.cast_cancelled, timeout=30_000):
        pass
    assert seen and seen[0].done < seen[0].total
    qtbot.waitUntil(lambda: not window.cancel_button.isVisible(), timeout=5000)
    assert os.listdir(out.parent) == []
    assert window.cast_report is None
    assert window.cast_action.isEnabled()


def test_cast_error_is_shown_in_a_dialog(qtbot, loaded, tmp_path):
    missing = tmp_path / "no" / "such" / "dir" / "x.safetensors"
    with qtbot.waitSignal(loaded.cast_failed, timeout=10_000) as blocker:
        loaded.start_cast(str(missing))
    assert blocker.args[0]
    box = loaded.error_box
    assert box.isVisible()
    assert box.windowTitle() == "Cast failed"
    assert "Could not save" in box.text()
    box.close()
    assert not missing.exists()
    assert loaded.cast_report is None


def test_proposed_output_for_shards(tmp_path):
    import json

    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    folder = tmp_path / "llm"
    folder.mkdir()
    save_file(
        {"a": torch.zeros(2, dtype=torch.float64)}, str(folder / "model-00001-of-00002.safetensors")
    )
    save_file({"b": torch.zeros(2)}, str(folder / "model-00002-of-00002.safetensors"))
    (folder / "model.safetensors.index.json").write_text(
        json.dumps(
            {
                "metadata": {"total_size": 24},
                "weight_map": {
                    "a": "model-00001-of-00002.safetensors",
                    "b": "model-00002-of-00002.safetensors",
                },
            }
        )
    )
    from inspector.core.dtypes import DTYPES

    ckpt = open_checkpoint(folder)
    assert proposed_output(ckpt, DTYPES["F32"]) == str(tmp_path / "llm.F32")


def test_overflow_is_counted_and_plotted_in_its_own_band(qtbot, window, tmp_path):
    """Overflow sits in a labelled band above the value scale, not at a tick that reads as 10¹;
    lossless tensors in a band below it, apart from tiny errors."""
    from inspector.core.dtypes import DTYPES
    from inspector.core.save.writer import save_arrays

    src = tmp_path / "mask.safetensors"
    f32 = DTYPES["F32"]
    save_arrays(
        src,
        [
            ("mask_bias", f32, np.array([0.0, -1e9, -1e9, 1.0], np.float32)),
            ("w", f32, np.array([0.5, 0.25], np.float32)),
            ("tiny", f32, np.array([0.1, 0.3], np.float32)),
        ],
    )
    with qtbot.waitSignal(window.loaded, timeout=10_000):
        window.open_path(str(src))
    with qtbot.waitSignal(window.cast_done, timeout=20_000) as blocker:
        window.start_cast(str(tmp_path / "mask.F16.safetensors"), DTYPES["F16"])
    rep = {r.name: r for r in blocker.args[0].tensors}
    assert rep["mask_bias"].overflow == 2 and not rep["mask_bias"].lossless
    assert rep["w"].lossless
    m = window.model
    assert m.index(m.row_of("mask_bias"), Col.CAST_ERR).data() == "2 overflow"
    assert m.index(m.row_of("w"), Col.CAST_ERR).data() == "0 (lossless)"
    plot = window.precision_plot
    assert list(plot.values)[:2] == [float("inf"), 0.0] and 0 < plot.values[2] < 1e-3
    _, y_over = plot.overflow_item.getData()
    _, y_tiny = plot.lossy_item.getData()
    _, y_zero = plot.lossless_item.getData()
    major = plot.getPlotItem().getAxis("left")._tickLevels[0]
    decades = [v for v, label in major if label not in ("overflow", "exact 0")]
    bands = {label: v for v, label in major if label in ("overflow", "exact 0")}
    assert len(y_over) == len(y_tiny) == len(y_zero) == 1
    assert y_zero[0] == bands["exact 0"] < plot.bottom_line.value() < min(decades)  # log10 units
    assert min(decades) <= y_tiny[0] <= max(decades)
    assert max(decades) < plot.top_line.value() < y_over[0] == bands["overflow"]
    assert plot.band_counts == (1, 1, 3)
    assert "overflow 2" in window.precision_panel.caption.text()


def test_error_plot_says_so_when_there_is_nothing_to_draw(qtbot, window, tmp_path):
    from inspector.core.dtypes import DTYPES
    from inspector.core.save.writer import save_arrays

    src = tmp_path / "m.safetensors"
    save_arrays(
        src,
        [
            ("exact", DTYPES["F64"], np.array([0.5, 1.0, -2.0])),
            ("huge", DTYPES["F64"], np.array([1e6, -1e7, np.inf])),
        ],
    )
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=10_000):
        window.open_path(str(src))
    assert window.current_tensor().name == "exact"
    # "exact" is the current row: the cast itself redraws it, and that redraw may land before
    # any later wait could start, so it is awaited together with cast_done
    with qtbot.waitSignals(
        [window.cast_done, window.details_ready],
        timeout=20_000,
        check_params_cbs=[None, lambda n: n == "exact"],
    ):
        window.start_cast(str(tmp_path / "o.safetensors"), DTYPES["F16"])
    assert "100% exact" in window.details.error_plot.message
    with qtbot.waitSignal(
        window.details_ready, timeout=10_000, check_params_cb=lambda n: n == "huge"
    ):
        window.select_tensor("huge")
    assert "overflowed" in window.details.error_plot.message
    # the saved values of "huge" are all infinite: counted, not an empty axis
    assert "−inf" in window.details.histogram.message or "−inf" in window.details.histogram.title


def test_cast_a_sharded_checkpoint_into_a_folder(qtbot, window, tmp_path):
    import json

    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file, save_file

    folder = tmp_path / "llm"
    folder.mkdir()
    save_file({"a": torch.arange(4, dtype=torch.float64)}, str(folder / "m-1.safetensors"))
    save_file({"b": torch.ones(2, dtype=torch.bfloat16)}, str(folder / "m-2.safetensors"))
    (folder / "model.safetensors.index.json").write_text(
        json.dumps(
            {
                "metadata": {"total_size": 36},
                "weight_map": {"a": "m-1.safetensors", "b": "m-2.safetensors"},
            }
        )
    )
    with qtbot.waitSignal(window.loaded, timeout=10_000):
        window.open_path(str(folder))
    window.cast_action.trigger()
    dlg = window.cast_dialog
    assert dlg.out_edit.text() == str(tmp_path / "llm.F32")
    with qtbot.waitSignal(window.cast_done, timeout=20_000):
        dlg.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    out = tmp_path / "llm.F32"
    assert sorted(p.name for p in out.iterdir()) == [
        "m-1.safetensors",
        "m-2.safetensors",
        "model.safetensors.index.json",
    ]
    assert load_file(str(out / "m-1.safetensors"))["a"].dtype == torch.float32
    with qtbot.waitSignal(window.loaded, timeout=10_000):
        window.message_bar.action.click()
    assert window.summary.n_differ == 0


def test_a_cast_finishing_after_another_file_was_opened_does_not_touch_it(
    qtbot, window, big_file, model_file, tmp_path
):
    from inspector.core.dtypes import DTYPES

    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(big_file))
    out = tmp_path / "big.F32.safetensors"
    with qtbot.waitSignal(window.cast_done, timeout=60_000):
        window.start_cast(str(out), DTYPES["F32"])
        with qtbot.waitSignal(window.loaded, timeout=20_000):
            window.open_path(str(model_file))
    assert out.is_file()
    assert window.ckpt.path == str(model_file)
    assert window.cast_report is None  # the report belongs to big.safetensors
    assert window.table.isColumnHidden(Col.CAST_ERR)
    assert "no longer shown" in window.message_bar.text


def test_details_ready_waits_for_the_before_after_plots_after_a_cast(qtbot, window, tmp_path):
    """After a cast the shown tensor is redrawn; its stats are cached, and "ready" used to be
    announced from that cache before the before/after request existed (screenshots and tests
    then saw the pre-cast plot)."""
    from inspector.core.dtypes import DTYPES
    from inspector.core.save.writer import save_arrays

    src = tmp_path / "m.safetensors"
    save_arrays(
        src,
        [
            ("a", DTYPES["F64"], np.array([0.5, 1.0, -2.0])),
            ("b", DTYPES["F64"], np.array([0.25, 4.0, -8.0])),
        ],
    )
    with qtbot.waitSignals([window.loaded, window.details_ready], timeout=10_000):
        window.open_path(str(src))
    with qtbot.waitSignal(window.details_ready, timeout=10_000, check_params_cb=lambda n: n == "b"):
        window.select_tensor("b")  # its stats are now cached
    seen: list[tuple[str, str]] = []
    window.details_ready.connect(lambda n: seen.append((n, window.details.error_plot.message)))
    with qtbot.waitSignal(window.cast_done, timeout=20_000):
        window.start_cast(str(tmp_path / "o.safetensors"), DTYPES["F16"])
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    assert all("100% exact" in message for _name, message in seen), seen


def test_a_cast_in_worker_processes_from_the_window_writes_what_threads_write(
    qtbot, loaded, model_file, tmp_path, monkeypatch
):
    """Worker processes are spawned from the window's job thread (never forked from Qt)."""
    import multiprocessing

    from inspector.cli.dispatch import main as cli_main
    from inspector.core.cast.worker_policy import PROCESSES_ENV

    monkeypatch.setenv(PROCESSES_ENV, "2")
    cast_via_button(qtbot, loaded)
    assert multiprocessing.active_children() == []
    monkeypatch.setenv(PROCESSES_ENV, "0")
    cli_out = tmp_path / "cli.safetensors"
    assert cli_main(["cast", str(model_file), "--target", "F32", "-o", str(cli_out)]) == 0
    assert (model_file.parent / "model.F32.safetensors").read_bytes() == cli_out.read_bytes()


def test_cancel_with_worker_processes_leaves_no_file_and_no_process(
    qtbot, window, big_file, tmp_path, monkeypatch
):
    import multiprocessing

    from inspector.core.cast.worker_policy import PROCESSES_ENV
    from inspector.core.dtypes import DTYPES

    monkeypatch.setenv(PROCESSES_ENV, "2")
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(big_file))
    out = tmp_path / "out" / "big.F16.safetensors"
    out.parent.mkdir()
    w = window.start_cast(str(out), DTYPES["F16"])
    # workers finish 64 MB before a queued click arrives: cancel on the job's own thread
    w.progress.connect(lambda p: p.done > 0 and w.cancel(), Qt.ConnectionType.DirectConnection)
    with qtbot.waitSignal(window.cast_cancelled, timeout=30_000):
        pass
    qtbot.waitUntil(lambda: not window.cancel_button.isVisible(), timeout=5000)
    assert os.listdir(out.parent) == []
    assert multiprocessing.active_children() == []


def test_after_a_cast_to_another_dtype_the_status_says_what_was_written(qtbot, loaded, tmp_path):
    """Cast to F16 while the chooser said F32: Status kept reading "F64 → F32" beside F16 errors."""
    with qtbot.waitSignal(loaded.cast_done, timeout=30_000):
        loaded.start_cast(str(tmp_path / "o.safetensors"), DTYPES["F16"])
    assert loaded.session.target.name == "F16" == loaded.target_box.currentText()
    model = loaded.model
    status = {
        model.tensor_at(r).name: model.data(model.index(r, Col.STATUS))
        for r in range(model.rowCount())
    }
    assert status[F64_NAMES[0]] == "F64 → F16"
