"""Translations the Qt way: strings marked with ``translate(context, text)`` (or
``QT_TRANSLATE_NOOP`` where a table of them is built at import), extracted by
``pyside6-lupdate`` into ``checkpoint_inspector_<lang>.ts``, compiled by ``pyside6-lrelease``
(``make translations``) into ``.qm`` files next to this module, loaded by a QTranslator for the
system locale or ``--lang``. The command line stays English."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

HERE = Path(__file__).resolve().parent
LANGUAGES = ("en", "zh_CN")
translate = QCoreApplication.translate


def qm_path(lang: str) -> Path:
    return HERE / f"checkpoint_inspector_{lang}.qm"


def install_translator(app: QCoreApplication, lang: str | None = None) -> str:
    """Load the translation for ``lang`` (default: the system locale); return the language used.

    English needs no file. A language without a ``.qm`` falls back to English.
    """
    name = lang or os.environ.get("CHECKPOINT_INSPECTOR_LANG") or QLocale.system().name()
    if name.startswith("zh") and name not in LANGUAGES:
        name = "zh_CN"  # zh, zh_SG, zh_Hans…: the one Chinese translation we have
    if name == "en" or name.startswith("en_") or not qm_path(name).is_file():
        return "en"
    ours = QTranslator(app)
    if not ours.load(str(qm_path(name))):
        return "en"
    app.installTranslator(ours)
    qt = QTranslator(app)  # Qt's own strings (dialog buttons) in the same language
    if qt.load(f"qtbase_{name}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        app.installTranslator(qt)
    app.setProperty("inspector_translators", [ours, qt])
    return name
