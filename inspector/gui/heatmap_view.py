"""The Heatmap tab: the selected tensor's matrix, downsampled in core, drawn as an image.

A diverging colour map centred at 0 (blue negative, red positive, symmetric limits), a colour
bar beside it, axes in the tensor's own row and column numbers, and the cell under the mouse
named in a tooltip (its rows, columns, value and any NaN/inf it holds).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from .i18n import translate
from .plots import Plot
from .value_grid import format_value

if TYPE_CHECKING:
    from inspector.core.heatmap import Heatmap

COLORMAP = "CET-D1"  # colorcet's diverging blue–white–red
NO_VALUE_RGBA = (110, 110, 110, 255)  # a cell without a finite value: grey, not "0" white


class HeatmapView(QWidget):
    """What each cell holds (a chooser), a caption (it wraps: a plot title would widen the
    pane), the plot."""

    sig_mode_changed = Signal(str)  # "peak" or "mean" (core.heatmap.MODES)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 2, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel(translate("HeatmapView", "Each cell:")))
        self.mode_box = QComboBox()
        self.mode_box.addItem(translate("HeatmapView", "largest |x| of its block"), "peak")
        self.mode_box.addItem(translate("HeatmapView", "mean of its block"), "mean")
        self.mode_box.currentIndexChanged.connect(
            lambda _i: self.sig_mode_changed.emit(self.mode())
        )
        row.addWidget(self.mode_box)
        row.addStretch(1)
        lay.addLayout(row)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        lay.addWidget(self.caption)
        self.plot = HeatmapPlot()
        lay.addWidget(self.plot, 1)

    def mode(self) -> str:
        return str(self.mode_box.currentData())

    def set_mode(self, mode: str) -> None:
        self.mode_box.setCurrentIndex(max(0, self.mode_box.findData(mode)))

    def set_heatmap(self, h: Heatmap, caption: str) -> None:
        self.caption.setText(caption)
        self.plot.set_heatmap(h)

    def show_message(self, message: str) -> None:
        self.caption.setText(message)
        self.plot.show_message(message)

    def clear_data(self) -> None:
        self.caption.setText("")
        self.plot.show_message("")


class HeatmapPlot(Plot):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, "")
        pi = self.getPlotItem()
        pi.showGrid(x=False, y=False)
        pi.invertY(True)  # row 0 at the top, as a matrix is written
        pi.setAspectLocked(False)
        pi.setLabel("left", translate("HeatmapPlot", "row"), color=self._text.name())
        pi.setLabel("bottom", translate("HeatmapPlot", "column"), color=self._text.name())
        self.image = pg.ImageItem(axisOrder="row-major")
        pi.addItem(self.image)
        self.no_value = pg.ImageItem(axisOrder="row-major")  # grey over the NaN cells
        pi.addItem(self.no_value)
        self.bar = pg.ColorBarItem(
            values=(-1.0, 1.0), colorMap=pg.colormap.get(COLORMAP), interactive=False, width=12
        )
        self.bar.setImageItem(self.image, insert_in=pi)
        self.bar.getAxis("right").setTextPen(pg.mkPen(self._text))
        self.heatmap: Heatmap | None = None
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)

    # ---- public API -----------------------------------------------------------------------
    def set_heatmap(self, h: Heatmap) -> None:
        self._clear_message()
        self.heatmap = h
        m, _clipped = h.colour_limit()
        self.bar.setLevels((-m, m))
        self.image.setImage(h.values.astype(np.float32), levels=(-m, m), autoLevels=False)
        rect = QRectF(0, 0, h.cols, h.rows)
        self.image.setRect(rect)
        self.image.show()
        missing = np.isnan(h.values)
        if missing.any():
            rgba = np.zeros((*h.values.shape, 4), np.uint8)
            rgba[missing] = NO_VALUE_RGBA
            self.no_value.setImage(rgba, autoLevels=False, levels=(0, 255))
            self.no_value.setRect(rect)
            self.no_value.show()
        else:
            self.no_value.clear()
        self.bar.show()
        pi = self.getPlotItem()
        pi.setXRange(0, h.cols, padding=0.02)
        pi.setYRange(0, h.rows, padding=0.02)

    def show_message(self, message: str) -> None:
        self.heatmap = None
        self.image.clear()
        self.no_value.clear()
        self.bar.hide()
        self.set_message("", message)

    def describe(self, x: float, y: float) -> str | None:
        """The tooltip of the point ``(x, y)`` in the tensor's column/row numbers, or None."""
        h = self.heatmap
        if h is None or not (0 <= x < h.cols and 0 <= y < h.rows):
            return None
        i, j = h.cell_of(int(y), int(x))
        re, ce = h.row_edges, h.col_edges
        r0, r1, c0, c1 = int(re[i]), int(re[i + 1]) - 1, int(ce[j]), int(ce[j + 1]) - 1
        rows = f"{r0:,}" if r0 == r1 else f"{r0:,}–{r1:,}"
        cols = f"{c0:,}" if c0 == c1 else f"{c0:,}–{c1:,}"
        v = format_value(h.values[i, j])
        if np.isnan(h.values[i, j]):  # every value of the block is NaN or inf
            v = translate("HeatmapPlot", "no finite value")
        if r0 == r1 and c0 == c1:
            text = translate("HeatmapPlot", "row {rows}, column {cols}: {v}")
        elif h.mode == "mean":
            text = translate("HeatmapPlot", "rows {rows}, columns {cols}: mean {v}")
        else:
            text = translate("HeatmapPlot", "rows {rows}, columns {cols}: largest |x| is {v}")
        text = text.format(rows=rows, cols=cols, v=v)
        bad = int(h.nonfinite[i, j])
        if bad:
            text += translate("HeatmapPlot", " ({n} NaN or inf left out)").format(n=f"{bad:,}")
        return text

    # ---- Qt -------------------------------------------------------------------------------
    def _on_mouse_moved(self, pos: QPointF) -> None:
        p = self.getPlotItem().vb.mapSceneToView(pos)
        text = self.describe(p.x(), p.y())
        if text is None:
            QToolTip.hideText()
        else:
            QToolTip.showText(QCursor.pos(), text, self)
