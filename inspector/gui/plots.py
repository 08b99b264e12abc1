"""pyqtgraph plots. Each plot creates its items once and then only calls ``setData``.

Colours come from the widget's QPalette so light and dark themes both read well.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from .i18n import translate

AFTER_COLOR = QColor(
    230, 110, 0
)  # orange: distinct from the palette highlight (blue) in both themes
LOSSLESS_COLOR = QColor(30, 160, 70)
OVERFLOW_COLOR = QColor(210, 40, 40)
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _decade(k: int) -> str:
    """``10⁻³`` for the tick at log10 = -3."""
    return "1" if k == 0 else "10" if k == 1 else "10" + str(k).translate(_SUPERSCRIPT)


def _with_alpha(c: QColor, a: int) -> QColor:
    c = QColor(c)
    c.setAlpha(a)
    return c


class _Plot(pg.PlotWidget):
    def __init__(self, parent: QWidget | None = None, title: str = "") -> None:
        super().__init__(parent)
        self.setAcceptDrops(False)
        self.viewport().setAcceptDrops(False)
        self.setMinimumHeight(140)
        pal = self.palette()
        self._text = pal.color(QPalette.ColorRole.Text)
        self._highlight = pal.color(QPalette.ColorRole.Highlight)
        self.setBackground(pal.color(QPalette.ColorRole.Base))
        pi = self.getPlotItem()
        for name in ("left", "bottom"):
            ax = pi.getAxis(name)
            ax.setPen(pg.mkPen(_with_alpha(self._text, 160)))
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

    def set_title(self, title: str) -> None:
        self._title = title
        self.getPlotItem().setTitle(title, color=self._text.name(), size="9pt")

    @property
    def title(self) -> str:
        return self._title

    def _add_legend(self) -> pg.LegendItem:
        leg = self.getPlotItem().addLegend(offset=(-8, 8), labelTextColor=self._text)
        leg.setBrush(pg.mkBrush(_with_alpha(self.palette().color(QPalette.ColorRole.Base), 200)))
        self._legend = leg
        return leg


class HistogramPlot(_Plot):
    """Value histogram of one tensor; after a cast, original and saved values overlaid."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, translate("Plots", "Values"))
        leg = self._add_legend()
        self.before_item = pg.PlotDataItem(
            stepMode="center",
            fillLevel=0,
            fillBrush=pg.mkBrush(_with_alpha(self._highlight, 90)),
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


class ErrorHistogramPlot(_Plot):
    """Histogram of log10 relative error of one tensor's saved values."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, translate("Plots", "Relative error"))
        self.item = pg.PlotDataItem(
            stepMode="center",
            fillLevel=0,
            fillBrush=pg.mkBrush(_with_alpha(AFTER_COLOR, 90)),
            pen=pg.mkPen(AFTER_COLOR, width=1.5),
        )
        self.addItem(self.item)
        pi = self.getPlotItem()
        pi.setLabel(
            "bottom",
            translate("Plots", "log10 |saved − original| / |original|"),
            color=self._text.name(),
        )
        pi.setLabel("left", translate("Plots", "count"), color=self._text.name())

    def set_errors(self, edges: np.ndarray, counts: np.ndarray, title: str) -> None:
        self._clear_message()
        self.item.setData(np.asarray(edges, float), np.asarray(counts, float))
        self.set_title(title)
        self.getPlotItem().enableAutoRange()

    def clear_data(self, title: str = "Relative error") -> None:
        self._clear_message()
        self.item.setData([], [])
        self.set_title(title)


class OverviewPlot(_Plot):
    """One point per tensor on a log scale; exact (zero) values drawn as marked triangles at the
    bottom. Clicking a point emits :attr:`tensor_clicked` with the tensor's name."""

    tensor_clicked = Signal(str)

    def __init__(
        self,
        parent: QWidget | None = None,
        title: str = "",
        ylabel: str = "",
        labels: tuple[str, str] = ("changed", "lossless"),
    ) -> None:
        super().__init__(parent, title)
        self.labels = labels
        pi = self.getPlotItem()
        pi.setLogMode(x=False, y=True)
        pi.getAxis("left").enableAutoSIPrefix(False)
        pi.setLabel(
            "bottom",
            translate("Plots", "tensor # (file order; click a point to select it)"),
            color=self._text.name(),
        )
        if ylabel:
            pi.setLabel("left", ylabel, color=self._text.name())
        self.lossy_item = pg.PlotDataItem(
            pen=None,
            symbol="o",
            symbolSize=7,
            symbolBrush=pg.mkBrush(AFTER_COLOR),
            symbolPen=pg.mkPen(_with_alpha(self._text, 120)),
        )
        self.lossless_item = pg.PlotDataItem(
            pen=None,
            symbol="t1",
            symbolSize=9,
            symbolBrush=pg.mkBrush(LOSSLESS_COLOR),
            symbolPen=pg.mkPen(_with_alpha(self._text, 120)),
        )
        self.selected_item = pg.PlotDataItem(
            pen=None,
            symbol="o",
            symbolSize=15,
            symbolBrush=None,
            symbolPen=pg.mkPen(self._highlight, width=2.5),
        )
        self.overflow_item = pg.PlotDataItem(
            pen=None,
            symbol="x",
            symbolSize=9,
            symbolBrush=pg.mkBrush(OVERFLOW_COLOR),
            symbolPen=pg.mkPen(OVERFLOW_COLOR, width=1.5),
        )
        for item in (self.lossy_item, self.overflow_item, self.lossless_item, self.selected_item):
            self.addItem(item)
        band_pen = pg.mkPen(_with_alpha(self._text, 110), style=Qt.PenStyle.DashLine)
        self.top_line = pg.InfiniteLine(angle=0, pen=band_pen)
        self.bottom_line = pg.InfiniteLine(angle=0, pen=band_pen)
        for item in (self.top_line, self.bottom_line):
            item.setVisible(False)
            self.getPlotItem().addItem(item, ignoreBounds=True)
        self.band_counts = (0, 0, 0)  # (overflowed, exact, all) of the last set_values
        for item in (self.lossy_item, self.overflow_item, self.lossless_item):
            item.sigPointsClicked.connect(self._clicked)
        self.names: list[str] = []
        self.values = np.zeros(0)
        self.floor = 1e-12
        self._positions: dict[str, tuple[float, float]] = {}

    def legend_html(self) -> str:
        """A caption (instead of a legend drawn over the points)."""
        return (
            f'<span style="color:{AFTER_COLOR.name()}">●</span> {self.labels[0]} &nbsp; '
            f'<span style="color:{OVERFLOW_COLOR.name()}">✕</span> '
            + translate("Plots", "overflow, inf or NaN (top band)")
            + " &nbsp; "
            f'<span style="color:{LOSSLESS_COLOR.name()}">▲</span> {self.labels[1]} '
            + translate("Plots", "(exactly 0: bottom band)")
        )

    def set_ylabel(self, text: str) -> None:
        self.getPlotItem().setLabel("left", text, color=self._text.name())

    def set_values(self, names: Sequence[str], values: Sequence[float | None], title: str) -> None:
        """``values[i]`` is the tensor's number; 0 means exact; inf means overflow/NaN (drawn in
        a labelled band above the scale, never at a tick that reads as a value); None: n/a."""
        self._clear_message()
        self.names = list(names)
        vals = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
        self.values = vals
        x = np.arange(len(vals), dtype=float)
        pos = np.isfinite(vals) & (vals > 0)
        inf = np.isinf(vals)
        zero = vals == 0
        # the value scale: whole decades around the finite errors, two at least
        lo = float(np.floor(np.log10(vals[pos].min()))) if pos.any() else -8.0
        hi = float(np.ceil(np.log10(vals[pos].max()))) if pos.any() else lo + 2
        if hi - lo < 2:
            lo, hi = lo - 1, max(hi, lo + 1) + (1 if hi - lo < 1 else 0)
        top_band, bottom_band = hi + 0.9, lo - 0.9
        self.floor = 10**bottom_band
        names_arr = np.array(self.names, dtype=object)
        self.lossy_item.setData(x[pos], vals[pos], data=names_arr[pos])
        self.overflow_item.setData(
            x[inf], np.full(int(inf.sum()), 10**top_band), data=names_arr[inf]
        )
        self.lossless_item.setData(
            x[zero], np.full(int(zero.sum()), 10**bottom_band), data=names_arr[zero]
        )
        self._positions = {n: (x[i], vals[i]) for i, n in enumerate(self.names) if pos[i]}
        self._positions.update(
            {n: (x[i], 10**top_band) for i, n in enumerate(self.names) if inf[i]}
        )
        self._positions.update(
            {n: (x[i], 10**bottom_band) for i, n in enumerate(self.names) if zero[i]}
        )
        self.selected_item.setData([], [])
        self.set_title(title)
        pi = self.getPlotItem()
        pi.enableAutoRange(x=True)
        show_top, show_bottom = bool(inf.any()), bool(zero.any())
        ymin = bottom_band - 0.5 if show_bottom else lo - 0.3
        ymax = top_band + 0.5 if show_top else hi + 0.3
        pi.setYRange(ymin, ymax, padding=0)
        # ticks only on the value scale: nothing in a band reads as a number
        step = max(1, -(-(int(hi) - int(lo)) // 5))  # at most ~6 labelled decades
        major = [(float(k), _decade(k)) for k in range(int(lo), int(hi) + 1, step)]
        # the bands are named on the axis: nothing there reads as a number
        if show_top:
            major.append((top_band, translate("Plots", "overflow")))
        if show_bottom:
            major.append((bottom_band, translate("Plots", "exact 0")))
        pi.getAxis("left").setTicks([major, [(float(k), "") for k in range(int(lo), int(hi) + 1)]])
        for line, y, show in (
            (self.top_line, hi + 0.45, show_top),
            (self.bottom_line, lo - 0.45, show_bottom),
        ):
            line.setPos(y)
            line.setVisible(show)
        n = max(len(vals), 1)
        self.band_counts = (int(inf.sum()), int(zero.sum()), n)

    def mark(self, name: str | None) -> None:
        p = self._positions.get(name) if name else None
        if p is None:
            self.selected_item.setData([], [])
        else:
            self.selected_item.setData([p[0]], [p[1]])

    def clear_data(self) -> None:
        self.set_values([], [], self.title)

    def _clicked(self, item: object, points: Sequence[object], *args: object) -> None:
        if len(points):
            name = points[0].data()
            if name:
                self.tensor_clicked.emit(str(name))


class OverviewPanel(QWidget):
    """An :class:`OverviewPlot` with a caption line (counts and the symbol key) above it."""

    def __init__(self, plot: OverviewPlot, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.setSpacing(2)
        self.plot = plot
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.RichText)
        lay.addWidget(self.caption)
        lay.addWidget(plot, 1)

    def set_caption(self, text: str) -> None:
        self.caption.setText(f"{text}<br>{self.plot.legend_html()}")
