"""The window redesign's regressions: state bugs a new user saw on screen, each a test that failed
on the old 1,100-line window. Fixtures use the numpy writer (torch is not the point here)."""

from __future__ import annotations

import os
import time

import numpy as np
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays

F32, F64, F16 = DTYPES["F32"], DTYPES["F64"], DTYPES["F16"]


def write(path, n=1, value=1.0, dtype=F64, name="w"):
    save_arrays(
        path, [(f"{name}{i}", dtype, np.full(n, value + i, dtype=dtype.numpy)) for i in range(2)]
    )
    return path


def open_and_wait(qtbot, win, path) -> None:
    with qtbot.waitSignals([win.loaded, win.details_ready], timeout=20_000):
        win.open_path(str(path))


def test_a_reference_dropped_during_a_cast_never_orphans_it(qtbot, window, tmp_path, monkeypatch):
    """Cancel used to cancel the diff; the cast went on writing while Cast & Save was enabled."""
    import threading

    from inspector.core.cast import job as convert

    big = write(tmp_path / "big.safetensors", n=1_000_000)
    ref = write(tmp_path / "ref.safetensors", n=1_000_000, dtype=F32)
    open_and_wait(qtbot, window, big)
    release = threading.Event()
    real_cast = convert.cast_checkpoint

    def held_cast(*args, **kwargs):  # the real cast, held at its first step until released
        job = real_cast(*args, **kwargs)
        first = next(job)
        release.wait(30)
        yield first
        yield from job

    monkeypatch.setattr(convert, "cast_checkpoint", held_cast)
    out = tmp_path / "out"
    out.mkdir()
    window.start_cast(str(out / "big.f16.safetensors"), F16)
    assert window.runner.current_kind == "cast"
    with qtbot.waitSignal(window.runner.sig_job_queued, timeout=20_000):
        window.open_reference(str(ref))
    assert window.runner.current_kind == "cast" and window.runner.queued_kind == "diff"
    assert not window.cast_action.isEnabled()
    compared = []
    window.diff_done.connect(compared.append)
    with qtbot.waitSignal(window.cast_cancelled, timeout=60_000):
        window.cancel_button.click()  # stops what the progress bar shows: the cast
        release.set()
    assert os.listdir(out) == []
    # the comparison asked for meanwhile then runs, and the bar stays until it is done
    qtbot.waitUntil(lambda: bool(compared), timeout=60_000)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=10_000)
    assert window.cast_action.isEnabled() and not window.cancel_button.isVisible()
    assert window.diffs is not None and window.cast_report is None


def test_a_reference_belongs_to_the_checkpoint_it_was_chosen_for(qtbot, window, tmp_path):
    """Opening B after comparing A with R auto-compared B with R ("431 only in one file")."""
    a = write(tmp_path / "a.safetensors")
    r = write(tmp_path / "r.safetensors", dtype=F32)
    b = write(tmp_path / "b.safetensors", name="other")
    open_and_wait(qtbot, window, a)
    with qtbot.waitSignal(window.diff_done, timeout=20_000):
        window.open_reference(str(r))
    assert window.details.fields["Reference"].isVisibleTo(window.details)
    open_and_wait(qtbot, window, b)
    qtbot.wait(200)  # no diff may start
    assert window.reference is None and window.diffs is None
    assert not window.runner.busy
    assert window.table.isColumnHidden(5 + 1)  # the |Δ| column is gone
    assert not window.details.fields["Reference"].isVisibleTo(window.details)
    assert "was cleared" in window.message_bar.text and "r.safetensors" in window.message_bar.text
    # Clear Reference leaves no "Reference:" line behind either
    open_and_wait(qtbot, window, a)
    with qtbot.waitSignal(window.diff_done, timeout=20_000):
        window.open_reference(str(r))
    window.clear_reference()
    assert not window.details.fields["Reference"].isVisibleTo(window.details)
    assert window.details.field("Reference") == ""


def test_statistics_of_an_overwritten_file_are_never_the_old_ones(qtbot, window, tmp_path):
    """The stats cache was keyed by path: a file overwritten and reopened showed its old range."""
    path = write(tmp_path / "m.safetensors", n=10, value=1.0)
    open_and_wait(qtbot, window, path)
    assert window.details.field("Range") == "1 … 1"
    time.sleep(0.01)
    write(path, n=10, value=500.0)
    open_and_wait(qtbot, window, path)
    assert window.details.field("Range") == "500 … 500"


def test_drops_are_taken_as_a_copy_never_a_move(qtbot, window, tmp_path):
    """A file manager offering Move may delete the dropped checkpoint once the drop is accepted."""
    path = write(tmp_path / "m.safetensors")
    md = QMimeData()
    md.setUrls([QUrl.fromLocalFile(str(path))])
    pos = QPointF(window.width() / 2, window.height() / 2)
    actions = Qt.DropAction.MoveAction | Qt.DropAction.CopyAction
    shift = Qt.KeyboardModifier.ShiftModifier  # Shift+drag: file managers propose Move
    enter = QDragEnterEvent(pos.toPoint(), actions, md, Qt.MouseButton.LeftButton, shift)
    assert enter.proposedAction() == Qt.DropAction.MoveAction
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted() and enter.dropAction() == Qt.DropAction.CopyAction
    ev = QDropEvent(pos, actions, md, Qt.MouseButton.LeftButton, shift)
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        QApplication.sendEvent(window, ev)
    assert ev.isAccepted() and ev.dropAction() == Qt.DropAction.CopyAction
    assert path.exists()


def test_message_colours_do_not_drift_from_one_message_to_the_next(qtbot, window):
    bar = window.message_bar
    bar.show_message("first", "error")
    first = bar.styleSheet()
    for kind in ("ok", "info", "info", "info", "ok"):
        bar.show_message("x", kind)
    bar.show_message("again", "error")
    assert bar.styleSheet() == first


def test_cast_dialog_keep_globs_belong_to_their_checkpoint(qtbot, window, tmp_path):
    a = write(tmp_path / "a.safetensors")
    b = write(tmp_path / "b.safetensors")
    open_and_wait(qtbot, window, a)
    dlg = window.open_cast_dialog()
    assert dlg.keep_edit.text() == ""
    dlg.keep_edit.setText("w1")
    dlg.out_edit.setText(str(tmp_path / "a.out.safetensors"))
    with qtbot.waitSignal(window.cast_done, timeout=20_000):
        dlg.accept()
    open_and_wait(qtbot, window, b)
    assert window.open_cast_dialog().keep_edit.text() == ""  # not silently applied to B
    window.cast_dialog.reject()
    open_and_wait(qtbot, window, a)
    assert window.open_cast_dialog().keep_edit.text() == "w1"
    window.cast_dialog.reject()
