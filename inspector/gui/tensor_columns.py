"""The tensor table's columns: their titles, tooltips, the extra data roles and the colours that
mark differing rows (shared by the model, the delegates and the tests)."""

from __future__ import annotations

from enum import IntEnum

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette

from .i18n import translate


class Col(IntEnum):
    NAME = 0
    DTYPE = 1
    SHAPE = 2
    PARAMS = 3
    SIZE = 4
    STATUS = 5
    CAST_ERR = 6
    REF_DIFF = 7


HEADERS = {
    Col.NAME: QT_TRANSLATE_NOOP("TensorTable", "Name"),
    Col.DTYPE: QT_TRANSLATE_NOOP("TensorTable", "DType"),
    Col.SHAPE: QT_TRANSLATE_NOOP("TensorTable", "Shape"),
    Col.PARAMS: QT_TRANSLATE_NOOP("TensorTable", "Params"),
    Col.SIZE: QT_TRANSLATE_NOOP("TensorTable", "Size"),
    Col.STATUS: QT_TRANSLATE_NOOP("TensorTable", "Status"),
    Col.CAST_ERR: QT_TRANSLATE_NOOP("TensorTable", "Rel. error"),
    Col.REF_DIFF: QT_TRANSLATE_NOOP("TensorTable", "|Δ| vs ref"),
}
TOOLTIPS = {
    Col.STATUS: QT_TRANSLATE_NOOP(
        "TensorTable",
        "Whether the tensor's dtype matches the target dtype. Integer and bool tensors are "
        "kept as they are (FloatCastAdapter only casts floats).",
    ),
    Col.CAST_ERR: QT_TRANSLATE_NOOP(
        "TensorTable",
        "Largest relative error between the original and the saved value (float64); "
        "— means the tensor was written unchanged",
    ),
    Col.REF_DIFF: QT_TRANSLATE_NOOP(
        "TensorTable", "Largest absolute difference to the reference checkpoint (float64)"
    ),
}


def header_text(col: Col) -> str:
    """A column's title in the window's language (looked up when shown, not at import)."""
    return translate("TensorTable", HEADERS[col])


StatusRole = Qt.ItemDataRole.UserRole + 2  # a TensorStatus: "match" | "differs" | "kept"
# the name as the Name column paints it: relative to the module the filter shows (the display
# role keeps the full name, for copying, sorting and the tooltip)
ShownNameRole = Qt.ItemDataRole.UserRole + 3


def highlight_colors(palette: QPalette | None = None) -> tuple[QColor, QColor]:
    """(background for differing rows, accent) readable in light and dark palettes."""
    pal = palette or QGuiApplication.palette()
    base = pal.color(QPalette.ColorRole.Base)
    amber = QColor(255, 170, 0)
    a = 0.28 if base.lightness() > 128 else 0.35
    mix = QColor(
        round(base.red() * (1 - a) + amber.red() * a),
        round(base.green() * (1 - a) + amber.green() * a),
        round(base.blue() * (1 - a) + amber.blue() * a),
    )
    return mix, amber
