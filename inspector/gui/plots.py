"""pyqtgraph plots. Each plot creates its items once and then only calls ``setData``.

Colours come from the widget's QPalette so light and dark themes both read well.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QWidget

from .i18n import translate

AFTER_COLOR = QColor(
    230, 110, 0
)  # orange: distinct from the palette highlight (blue) in both themes
LOSSLESS_COLOR = QColor(30, 160, 70)
OVERFLOW_COLOR = QColor(210, 40, 40)
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def decade(k: int) -> str:
    """``10⁻³`` for the tick at log10 = -3."""
    return "1" if k == 0 else "10" if k == 1 else "10" + str(k).translate(_SUPERSCRIPT)


def with_alpha(c: QColor, a: int) -> QColor:
    c = QColor(c)
    c.setAlpha(a)
    return c


class IntegerAxis(pg.AxisItem):
    """An axis of counts (tensor #): ticks only at whole numbers, never 2.5."""

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:
        levels = [
            (spacing, [v for v in values if float(v).is_integer()])
            for spacing, values in super().tickValues(minVal, maxVal, size)
            if spacing >= 1
        ]
        if levels:
            return levels
        lo, hi = math.ceil(minVal), math.floor(maxVal)  # zoomed in to a few tensors
        return [(1.0, [float(v) for v in range(lo, hi + 1)])]


class Plot(pg.PlotWidget):
    def __init__(
        self, parent: QWidget | None = None, title: str = "", integer_x: bool = False
    ) -> None:
        axes = {"bottom": IntegerAxis("bottom")} if integer_x else None
        super().__init__(parent, axisItems=axes)
        self.setAcceptDrops(False)
        self.viewport().setAcceptDrops(False)
        self.setMinimumHeight(110)  # two stacked in the details pane fit 800×600
        pal = self.palette()
        self._text = pal.color(QPalette.ColorRole.Text)
        self._highlight = pal.color(QPalette.ColorRole.Highlight)
        self.setBackground(pal.color(QPalette.ColorRole.Base))
        pi = self.getPlotItem()
        for name in ("left", "bottom"):
            ax = pi.getAxis(name)
            ax.setPen(pg.mkPen(with_alpha(self._text, 160)))
            ax.setTextPen(pg.mkPen(self._text))
        pi.showGrid(x=True, y=True, alpha=0.15)
        pi.setMenuEnabled(False)
        self.message_item = pg.TextItem("", color=self._text, anchor=(0.5, 0.5))
        self.message_item.setZValue(10)
        self.message = ""
        self._title = ""
        self.set_title(title)
        self._legend: pg.LegendItem | None = None

    def set_message(self, title: str, message: str) -> None:
        """Nothing to plot: say why in the middle of an empty frame (not an empty −2…2 axis)."""
        for item in self.listDataItems():
            item.setData([], [])
        if self._legend is not None:
            self._legend.setVisible(False)
        self.set_title(title)
        self.message = message
        pi = self.getPlotItem()
        if self.message_item.scene() is None:
            pi.addItem(self.message_item, ignoreBounds=True)
        pi.setXRange(0, 1, padding=0)
        pi.setYRange(0, 1, padding=0)
        for name in ("left", "bottom"):
            pi.getAxis(name).setStyle(showValues=False)
        self.message_item.setText(message)
        self.message_item.setPos(0.5, 0.5)
        self.message_item.show()

    def _clear_message(self) -> None:
        if self.message:
            self.message = ""
            self.message_item.hide()
            pi = self.getPlotItem()
            for name in ("left", "bottom"):
                pi.getAxis(name).setStyle(showValues=True)

    def legend_labels(self) -> list[str]:
        """The key's entries as shown (none while it is hidden)."""
        leg = self._legend
        if leg is None or not leg.isVisible():
            return []
        return [label.text for _sample, label in leg.items]

    def set_title(self, title: str) -> None:
        self._title = title
        self.getPlotItem().setTitle(title, color=self._text.name(), size="9pt")

    @property
    def title(self) -> str:
        return self._title

    def _add_legend(self) -> pg.LegendItem:
        """The key in a row of its own between the title and the data (where the hidden top axis
        sits), one row of entries: never over the bars, whatever the plot's height."""
        pi = self.getPlotItem()
        leg = pg.LegendItem(colCount=2, labelTextColor=self._text)
        pi.layout.removeItem(pi.getAxis("top"))  # never shown here: its cell holds the key
        pi.layout.addItem(leg, 1, 0, 1, 3)  # across the left axis's column too: more room
        leg.layout.setHorizontalSpacing(6)
        leg.layout.setContentsMargins(0, 0, 0, 0)
        pi.layout.setAlignment(leg, Qt.AlignmentFlag.AlignHCenter)
        self._legend = leg
        return leg


class HistogramPlot(Plot):
    """Value histogram of one tensor; after a cast, original and saved values overlaid."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, translate("Plots", "Values"))
        leg = self._add_legend()
        self.before_item = pg.PlotDataItem(
            stepMode="center",
            fillLevel=0,
            fillBrush=pg.mkBrush(with_alpha(self._highlight, 90)),
            pen=pg.mkPen(self._highlight, width=1.5),
            name="original",
        )
        self.after_item = pg.PlotDataItem(
            stepMode="center",
            pen=pg.mkPen(AFTER_COLOR, width=2, style=Qt.PenStyle.DashLine),
            name="saved",
        )
        self.addItem(self.before_item)
        self.addItem(self.after_item)
        leg.setVisible(False)
        self.getPlotItem().setLabel("left", translate("Plots", "count"), color=self._text.name())
        self.mode = "empty"

    def set_values(self, edges: np.ndarray, counts: np.ndarray, title: str = "Values") -> None:
        self._clear_message()
        self.before_item.setData(np.asarray(edges, float), np.asarray(counts, float))
        self.after_item.setData([], [])
        self.before_item.opts["name"] = "values"
        if self._legend is not None:
            self._legend.setVisible(False)
        self.set_title(title)
        self.getPlotItem().enableAutoRange()
        self.mode = "values"

    def set_before_after(
        self,
        edges: np.ndarray,
        before: np.ndarray,
        after: np.ndarray,
        before_label: str,
        after_label: str,
        title: str,
    ) -> None:
        self._clear_message()
        self.before_item.setData(np.asarray(edges, float), np.asarray(before, float))
        self.after_item.setData(np.asarray(edges, float), np.asarray(after, float))
        if self._legend is not None:
            self._legend.clear()
            self._legend.addItem(self.before_item, before_label)
            self._legend.addItem(self.after_item, after_label)
            self._legend.setVisible(True)
        self.set_title(title)
        self.getPlotItem().enableAutoRange()
        self.mode = "before_after"

    def clear_data(self, title: str = "Values") -> None:
        self._clear_message()
        self.before_item.setData([], [])
        self.after_item.setData([], [])
        if self._legend is not None:
            self._legend.setVisible(False)
        self.set_title(title)
        self.mode = "empty"


class ErrorHistogramPlot(Plot):
    """Histogram of log10 relative error of one tensor's saved values."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, translate("Plots", "Relative error"))
        self.item = pg.PlotDataItem(
            stepMode="center",
            fillLevel=0,
            fillBrush=pg.mkBrush(with_alpha(AFTER_COLOR, 90)),
            pen=pg.mkPen(AFTER_COLOR, width=1.5),
        )
        self.addItem(self.item)
        pi = self.getPlotItem()
        # the ticks read 10⁻⁴ (not -4 under a "log10 …" axis title that a small window cut off)
        pi.setLabel("left", translate("Plots", "count"), color=self._text.name())

    def set_errors(self, edges: np.ndarray, counts: np.ndarray, title: str) -> None:
        self._clear_message()
        self.item.setData(np.asarray(edges, float), np.asarray(counts, float))
        self.set_title(title)
        pi = self.getPlotItem()
        pi.enableAutoRange()
        lo, hi = math.ceil(float(edges[0])), math.floor(float(edges[-1]))
        step = max(1, -(-(hi - lo) // 5))  # at most ~6 labelled decades
        ticks = [(float(k), decade(k)) for k in range(lo, hi + 1, step)]
        pi.getAxis("bottom").setTicks([ticks, [(float(k), "") for k in range(lo, hi + 1)]])

    def clear_data(self, title: str = "Relative error") -> None:
        self._clear_message()
        self.item.setData([], [])
        self.set_title(title)
