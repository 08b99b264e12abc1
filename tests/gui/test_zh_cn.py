"""Every visible string of the window is translated in zh_CN: walk the widgets' texts after
opening, casting and comparing, and fail on any English word that is not a technical term,
a name from the file, or a number."""

from __future__ import annotations

import html
import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QLabel,
    QLineEdit,
    QTabBar,
    QWidget,
)

from inspector.core.dtypes import DTYPES
from inspector.gui.tensor_columns import Col

# words that stay as they are in Chinese ML writing, and units
KEEP = {
    "dtype", "safetensors", "checkpoint", "pytorch", "burn", "store", "load_state_dict", "matmul",
    "mismatch", "nan", "inf", "ctrl", "shift", "esc", "glob", "kib", "mib", "gib", "b", "k", "m",
    "index", "json", "torch", "floatcastadapter", "pytorchtoburnadapter", "chain", "to", "max",
    "float64", "log10", "embed", "lm_head", "bias", "layernorm", "inv_freq", "inspector", "f",
    "config", "pt", "pth", "bin", "ckpt", "bpk", "burnpack", "gguf",  # file names and suffixes
    "fp8", "int8", "int4", "nvfp4", "mxfp4",  # quantization schemes
}  # fmt: skip
WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]+")


def visible_texts(win) -> list[str]:
    texts = [win.windowTitle()]
    for w in win.findChildren(QWidget):
        if not w.isVisible():
            continue
        if isinstance(w, (QLabel, QAbstractButton)):
            texts.append(w.text())
        elif isinstance(w, QLineEdit):
            texts.append(w.placeholderText())
        elif isinstance(w, QTabBar):
            texts += [w.tabText(i) for i in range(w.count()) if w.isTabVisible(i)]
        if w.toolTip():
            texts.append(w.toolTip())
    texts += [a.text() for a in win.menuBar().actions()]
    for menu_action in win.menuBar().actions():
        texts += [a.text() for a in menu_action.menu().actions() if a.text()]
    model = win.table.model()
    texts += [
        str(model.headerData(c, Qt.Orientation.Horizontal))
        for c in range(len(Col))
        if not win.table.isColumnHidden(c)
    ]
    for plot in (win.details.histogram, win.details.error_plot, win.precision_plot, win.diff_plot):
        if plot.isVisible():
            texts.append(plot.title)
    return texts


def untranslated(text: str, data_names: set[str]) -> list[str]:
    text = html.unescape(re.sub(r"<[^>]+>", " ", text)).replace("\u200b", "")  # tags, &nbsp;
    for name in sorted(data_names, key=len, reverse=True):
        text = text.replace(name, " ")
    left = []
    for word in WORD.findall(text):
        w = word.lower()
        if w in KEEP or w.upper() in DTYPES or re.fullmatch(r"[a-z]?\d+[a-z]*", w):
            continue
        left.append(word)
    return left


def test_no_visible_string_is_left_in_english(
    qtbot, zh_cn, settings, model_file, f32_file, tmp_path
):
    from inspector.gui.main_window import MainWindow

    win = MainWindow(settings=settings)  # a fresh settings file: F32 by default
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    data = {model_file.name, f32_file.name, "out.f16.safetensors", str(tmp_path)}
    problems: dict[str, list[str]] = {}

    def check(stage: str) -> None:
        names = data | {t.name for t in (win.ckpt.tensors if win.ckpt else [])}
        for text in visible_texts(win):
            bad = untranslated(text, names)
            if bad:
                problems.setdefault(stage, []).append(f"{text!r}: {bad}")

    check("empty")
    with qtbot.waitSignals([win.loaded, win.details_ready], timeout=20_000):
        win.open_path(str(model_file))
    check("loaded")
    with qtbot.waitSignal(win.cast_done, timeout=20_000):
        win.start_cast(str(tmp_path / "out.f16.safetensors"), DTYPES["F16"])
    qtbot.waitUntil(lambda: win.details.error_plot.isVisible(), timeout=10_000)
    check("cast")
    with qtbot.waitSignal(win.diff_done, timeout=20_000):
        win.open_reference(str(f32_file))
    check("compare")
    dlg = win.open_cast_dialog()
    names = data | {t.name for t in win.ckpt.tensors}
    for w in dlg.findChildren(QWidget):
        if w.isVisible() and isinstance(w, (QLabel, QAbstractButton)):
            bad = untranslated(w.text(), names)
            if bad:
                problems.setdefault("cast dialog", []).append(f"{w.text()!r}: {bad}")
    dlg.reject()
    assert win.findChildren(QComboBox)  # the dtype chooser holds dtype names only
    assert not problems, problems


def test_a_job_asked_for_while_one_runs_is_said_in_chinese(qtbot, zh_cn, settings) -> None:
    """The status bar's "waits for the running job" (it was an untranslated f-string)."""
    from inspector.gui.main_window import MainWindow

    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.runner.sig_job_queued.emit("统计")  # a job's label, already translated by its caller
    message = win.statusBar().currentMessage()
    assert message.startswith("统计") and untranslated(message, set()) == [], message
