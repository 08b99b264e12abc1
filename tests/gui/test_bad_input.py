"""Every file of the malformed corpus dropped on the window: a message naming the problem, and the
window keeps the checkpoint it was showing. The odd-but-valid files open."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt

from tests.malformed.make_corpus import CASES

pytest.importorskip("torch")  # the corpus is built with torch's writers (torch.save pickles)

from .test_window import drop

REJECTS = [c for c in CASES if c.expect == "reject"]
OKS = [c for c in CASES if c.expect == "ok"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    base = tmp_path_factory.mktemp("gui-corpus")
    return {c.name: c.make(base / c.name) for c in CASES}


def state(win):
    t = win.current_tensor()
    return (
        win.ckpt.path,
        win.model.rowCount(),
        win.windowTitle(),
        win.summary_label.text(),
        t.name if t is not None else None,
        win.stack.currentIndex(),
    )


def test_bad_drops_show_the_reason_and_keep_the_window(qtbot, loaded, corpus):
    before = state(loaded)
    assert before[1] == 21
    for case in REJECTS:
        path = corpus[case.name]
        with qtbot.waitSignal(loaded.load_failed, timeout=20_000) as blocker:
            drop(loaded, [path])
        msg = blocker.args[0]
        assert msg.startswith(f"{path}: "), (case.name, msg)
        assert re.search(case.says, msg), (case.name, msg)
        bar = loaded.message_bar
        assert bar.isVisible() and bar.kind == "error", case.name
        assert "Could not open" in bar.text and "still showing the previous checkpoint" in bar.text
        assert "Traceback" not in bar.text
        assert state(loaded) == before, case.name


def test_bad_reference_drop_keeps_the_window(qtbot, loaded, corpus):
    """Shift-drop compares with a reference; a broken reference is explained, nothing changes."""
    before = state(loaded)
    for name in ("torch_pickle_zip", "truncated_data", "dup_field", "folder_named_safetensors"):
        drop(loaded, [corpus[name]], modifiers=Qt.KeyboardModifier.ShiftModifier)
        qtbot.waitUntil(lambda: loaded.message_bar.isVisible(), timeout=20_000)
        qtbot.waitUntil(lambda n=name: str(corpus[n]) in loaded.message_bar.text, timeout=20_000)
        assert loaded.message_bar.kind == "error"
        assert loaded.reference is None
        assert state(loaded) == before
        loaded.message_bar.hide()


def test_bad_drop_on_an_empty_window_stays_empty(qtbot, window, corpus):
    for name in ("empty_file", "torch_pickle_legacy", "text_file"):
        with qtbot.waitSignal(window.load_failed, timeout=20_000) as blocker:
            drop(window, [corpus[name]])
        assert re.search(next(c.says for c in CASES if c.name == name), blocker.args[0])
        assert window.ckpt is None and window.stack.currentIndex() == 0
        assert "still showing" not in window.message_bar.text


@pytest.mark.parametrize("case", OKS, ids=lambda c: c.name)
def test_odd_but_valid_files_open(qtbot, window, corpus, case):
    path = corpus[case.name]
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(path))
    assert window.ckpt.path == str(path)
    assert window.model.rowCount() == len(window.ckpt.tensors)
    assert not (window.message_bar.isVisible() and window.message_bar.kind == "error")
