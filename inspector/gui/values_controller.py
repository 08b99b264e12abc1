"""The Values and Heatmap tabs of the details pane: what they show follows the session's
selection; each is read off the GUI thread (the runner's ``values`` and ``heatmap`` requests,
a newer one making an older answer stale), and only when its tab is open."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from inspector.core.heatmap import heatmap
from inspector.core.value_views import Plane, value_slice

from .errors import error_text
from .i18n import translate
from .value_grid import WINDOW

if TYPE_CHECKING:
    from inspector.core.heatmap import Heatmap
    from inspector.core.layout import TensorInfo
    from inspector.core.value_views import ValueSlice
    from inspector.session import Session

    from .job_runner import JobRunner
    from .tensor_page import TensorPage

HEATMAP_SIDE = 256  # cells a side at most: finer than the pane is wide at 1280×800


class ValuesController(QObject):
    values_ready = Signal(str)  # tensor name: the value grid shows its window
    heatmap_ready = Signal(str)  # tensor name: the heatmap is drawn

    def __init__(
        self, session: Session, runner: JobRunner, page: TensorPage, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.runner = runner
        self.details = page.details
        self.values = page.details.values_view
        self.heatmap = page.details.heatmap_view
        self._values_of: TensorInfo | None = None  # the tensor whose window was asked for
        self._heatmap_of: TensorInfo | None = None
        session.events.selection_changed.connect(self._on_selection)
        self.details.view_tabs.currentChanged.connect(lambda _i: self._refresh())
        self.values.sig_window_changed.connect(self._on_window)
        self.heatmap.sig_mode_changed.connect(self._on_mode)

    # ---- session -> views -------------------------------------------------------------------
    def _on_selection(self, t: TensorInfo | None) -> None:
        self.runner.invalidate("values", "heatmap")
        self._values_of = self._heatmap_of = None
        if t is None:
            self.values.set_plane(None)
            self.heatmap.clear_data()
            return
        w = self.session.quantized_weight(t)
        self.values.set_plane(Plane(tuple(w.shape) if w is not None else tuple(t.shape)))
        self.heatmap.show_message(translate("ValuesController", "computing…"))
        self._refresh()

    def _refresh(self) -> None:
        t = self.session.current
        if t is None:
            return
        shown = self.details.view_tabs.currentWidget()
        if shown is self.values and self._values_of is not t:
            self._on_window(*self.values.window())
        elif shown is self.heatmap and self._heatmap_of is not t:
            self._request_heatmap(t)

    def _on_mode(self, _mode: str) -> None:
        t = self.session.current
        if t is not None:
            self.heatmap.show_message(translate("ValuesController", "computing…"))
            self._request_heatmap(t)

    # ---- requests ---------------------------------------------------------------------------
    def _on_window(self, index: tuple, row0: int, col0: int) -> None:
        s, t = self.session, self.session.current
        if t is None or s.checkpoint is None:
            return
        self._values_of = t
        self.runner.request(
            "values",
            value_slice,
            s.checkpoint,
            t,
            tuple(index),
            row0,
            col0,
            WINDOW,
            WINDOW,
            s.quantized_weight(t),
            on_result=lambda res, t=t: self._on_values(t, res),
            on_error=lambda e, t=t: self._on_values_failed(t, e),
        )

    def _request_heatmap(self, t: TensorInfo) -> None:
        s = self.session
        if s.checkpoint is None:
            return
        self._heatmap_of = t
        ckpt, w, mode = s.checkpoint, s.quantized_weight(t), self.heatmap.mode()
        self.runner.request(
            "heatmap",
            lambda: heatmap(ckpt, t, HEATMAP_SIDE, mode, weight=w),
            on_result=lambda res, t=t: self._on_heatmap(t, res),
            on_error=lambda e, t=t: self._on_heatmap_failed(t, e),
            job=True,
        )

    # ---- answers ----------------------------------------------------------------------------
    def _on_values(self, t: TensorInfo, res: ValueSlice) -> None:
        if t is self.session.current:
            if res.values.size:
                self.values.set_slice(res)
            else:
                self.values.set_message(translate("ValuesController", "No values"))
            self.values_ready.emit(t.name)

    def _on_values_failed(self, t: TensorInfo, e: BaseException) -> None:
        if t is self.session.current:
            self.values.set_message(
                translate("ValuesController", "Values unavailable: {why}").format(
                    why=error_text(None, e)
                )
            )
            self.values_ready.emit(t.name)

    def _on_heatmap(self, t: TensorInfo, h: Heatmap) -> None:
        if t is not self.session.current:
            return
        if h.values.size == 0 or h.rows * h.cols == 0:
            self.heatmap.show_message(translate("ValuesController", "No values"))
        else:
            self.heatmap.set_heatmap(h, heatmap_title(h, self.session.quantized_weight(t)))
        self.heatmap_ready.emit(t.name)

    def _on_heatmap_failed(self, t: TensorInfo, e: BaseException) -> None:
        if t is self.session.current:
            self.heatmap.show_message(
                translate("ValuesController", "Heatmap unavailable: {why}").format(
                    why=error_text(None, e)
                )
            )
            self.heatmap_ready.emit(t.name)


def heatmap_title(h: Heatmap, weight: object | None = None) -> str:
    cells_r, cells_c = h.values.shape
    if (cells_r, cells_c) == (h.rows, h.cols):
        title = translate("ValuesController", "{rows} × {cols} values").format(
            rows=f"{h.rows:,}", cols=f"{h.cols:,}"
        )
    else:  # what each cell holds is the chooser's
        title = translate("ValuesController", "{rows} × {cols} in {r} × {c} cells").format(
            rows=f"{h.rows:,}", cols=f"{h.cols:,}", r=cells_r, c=cells_c
        )
    if weight is not None:
        title += translate("ValuesController", ", dequantized")
    limit, clipped = h.colour_limit()
    if clipped:
        title += translate(
            "ValuesController", " · colours saturate beyond ±{m} (a few cells reach {top})"
        ).format(m=f"{limit:.3g}", top=f"{h.largest:.3g}")
    bad = int(h.nonfinite.sum())
    if bad:
        title += translate(
            "ValuesController", " · {n} NaN or inf not drawn (grey: a block of nothing else)"
        ).format(n=f"{bad:,}")
    return title


__all__ = ["HEATMAP_SIDE", "ValuesController", "heatmap_title"]
