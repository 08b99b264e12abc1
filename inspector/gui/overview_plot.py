"""The per-tensor overview plots under the table: one point per tensor on a log scale (the
precision a cast lost, the difference to a reference), and the panel that captions one."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from .i18n import translate
from .plots import AFTER_COLOR, LOSSLESS_COLOR, OVERFLOW_COLOR, Plot, decade, with_alpha

UNDERFLOW_COLOR = QColor(130, 80, 200)  # violet: not the overflow red, not the lossless green


class OverviewPlot(Plot):
    """One point per tensor on a log scale; exact (zero) values drawn as marked triangles at the
    bottom. Beside each tensor's largest error, its typical one (the precision plot), and a
    largest error that an underflow made 1 in a symbol of its own. Clicking a point emits
    :attr:`tensor_clicked` with the tensor's name."""

    tensor_clicked = Signal(str)

    def __init__(
        self,
        parent: QWidget | None = None,
        title: str = "",
        ylabel: str = "",
        labels: tuple[str, str] = ("changed", "lossless"),
    ) -> None:
        super().__init__(parent, title, integer_x=True)
        self.labels = labels
        pi = self.getPlotItem()
        pi.setLogMode(x=False, y=True)
        # what the x-axis counts, said without a title row the plot's height cannot spare
        self.setToolTip(
            translate("Plots", "x: tensor # in file order (click a point to select it)")
        )
        pi.getAxis("left").enableAutoSIPrefix(False)
        if ylabel:
            pi.setLabel("left", ylabel, color=self._text.name())
        self.lossy_item = pg.PlotDataItem(
            pen=None,
            symbol="o",
            symbolSize=7,
            symbolBrush=pg.mkBrush(AFTER_COLOR),
            symbolPen=pg.mkPen(with_alpha(self._text, 120)),
        )
        self.lossless_item = pg.PlotDataItem(
            pen=None,
            symbol="t1",
            symbolSize=9,
            symbolBrush=pg.mkBrush(LOSSLESS_COLOR),
            symbolPen=pg.mkPen(with_alpha(self._text, 120)),
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
        self.typical_item = pg.PlotDataItem(
            pen=None,
            symbol="s",
            symbolSize=6,
            symbolBrush=pg.mkBrush(self._highlight),
            symbolPen=pg.mkPen(with_alpha(self._text, 90)),
        )
        self.underflow_item = pg.PlotDataItem(
            pen=None,
            symbol="t",
            symbolSize=10,
            symbolBrush=pg.mkBrush(UNDERFLOW_COLOR),
            symbolPen=pg.mkPen(with_alpha(self._text, 120)),
        )
        points = (self.lossy_item, self.overflow_item, self.lossless_item, self.underflow_item)
        for item in (self.typical_item, *points, self.selected_item):
            self.addItem(item)
        band_pen = pg.mkPen(with_alpha(self._text, 110), style=Qt.PenStyle.DashLine)
        # each label on the value side of its line (the band beyond holds a row of markers);
        # no fill: a point behind a label stays visible
        opts = {"color": self._text.name(), "movable": False}
        self.top_line = pg.InfiniteLine(
            angle=0,
            pen=band_pen,
            label=translate("Plots", "↑ overflow, inf or NaN"),
            labelOpts={**opts, "position": 0.99, "anchors": [(1, 0), (1, 0)]},
        )
        self.bottom_line = pg.InfiniteLine(
            angle=0,
            pen=band_pen,
            label=translate("Plots", "↓ exact (0)"),
            labelOpts={**opts, "position": 0.99, "anchors": [(1, 1), (1, 1)]},
        )
        for item in (self.top_line, self.bottom_line):
            item.setVisible(False)
            self.getPlotItem().addItem(item, ignoreBounds=True)
        self.band_counts = (0, 0, 0)  # (overflowed, exact, all) of the last set_values
        self.shows_typical = self.shows_underflow = False  # in the last set_values
        for item in (*points, self.typical_item):
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
            + self._extra_legend()
        )

    def _extra_legend(self) -> str:
        extra = ""
        if self.shows_typical:
            extra += f' &nbsp; <span style="color:{self._highlight.name()}">■</span> ' + translate(
                "Plots", "typical (mean)"
            )
        if self.shows_underflow:
            extra += f' &nbsp; <span style="color:{UNDERFLOW_COLOR.name()}">▼</span> ' + translate(
                "Plots", "max 1 from an underflow"
            )
        return extra

    def set_ylabel(self, text: str) -> None:
        self.getPlotItem().setLabel("left", text, color=self._text.name())

    def set_values(
        self,
        names: Sequence[str],
        values: Sequence[float | None],
        title: str,
        typical: Sequence[float | None] | None = None,
        underflow: Sequence[bool] | None = None,
    ) -> None:
        """``values[i]`` is the tensor's number; 0 means exact; inf means overflow/NaN (drawn in
        a labelled band above the scale, never at a tick that reads as a value); None: n/a.
        ``typical[i]``, drawn beside it, is its typical error; ``underflow[i]`` marks a largest
        error of 1 that an underflow made (not rounding)."""
        self._clear_message()
        self.names = list(names)
        vals = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
        self.values = vals
        x = np.arange(len(vals), dtype=float)
        pos = np.isfinite(vals) & (vals > 0)
        inf = np.isinf(vals)
        zero = vals == 0
        names_arr = np.array(self.names, dtype=object)
        typ = np.array(
            [np.nan if v is None else float(v) for v in typical or [None] * len(vals)], dtype=float
        )
        typ_pos = pos & np.isfinite(typ) & (typ > 0)
        self.typical_item.setData(x[typ_pos], typ[typ_pos], data=names_arr[typ_pos])
        under = pos & np.array(underflow or [False] * len(vals), dtype=bool)
        self.underflow_item.setData(x[under], vals[under], data=names_arr[under])
        self.shows_typical, self.shows_underflow = bool(typ_pos.any()), bool(under.any())
        # the value scale: whole decades around the finite errors, two at least
        scale = np.concatenate([vals[pos], typ[typ_pos]])
        lo = float(np.floor(np.log10(scale.min()))) if scale.size else -8.0
        hi = float(np.ceil(np.log10(scale.max()))) if scale.size else lo + 2
        if hi - lo < 2:
            lo, hi = lo - 1, max(hi, lo + 1) + (1 if hi - lo < 1 else 0)
        top_band, bottom_band = hi + 0.9, lo - 0.9
        self.floor = 10**bottom_band
        lossy = pos & ~under
        self.lossy_item.setData(x[lossy], vals[lossy], data=names_arr[lossy])
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
        major = [(float(k), decade(k)) for k in range(int(lo), int(hi) + 1, step)]
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
