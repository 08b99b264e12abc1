"""The details pane of the selected tensor: its facts at once, statistics and the before/after
plots of the last cast from background requests, cached by file identity (an overwritten file is
a new file) and dropped when stale (the runner's generation counter)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication

from inspector.core.quant.storage_figures import StorageFigures, storage_figures
from inspector.core.quant.values import weight_stats_and_histogram
from inspector.core.stats import stats_and_histogram

from .errors import error_text
from .i18n import translate
from .precision import BeforeAfter, before_after
from .table_text import format_shape, status_text

if TYPE_CHECKING:
    from inspector.core.checkpoint import Checkpoint
    from inspector.core.dtypes import DType
    from inspector.core.layout import TensorInfo
    from inspector.session import CastResult, FileIdentity, LazyCheckpoint, Session

    from .job_runner import JobRunner
    from .tensor_page import TensorPage


def before_after_of(ckpt: Checkpoint, t: TensorInfo, output: LazyCheckpoint) -> BeforeAfter:
    """Worker side: the tensor's values before and after the cast, for the overlaid plots."""
    return before_after(t.name, ckpt.view(t), output.get().view(t.name))


class DetailsController(QObject):
    """Connects the tensor page's selection to the session, and the session's selection to the
    details pane and the plots: only the session, the runner and the page it is given."""

    details_ready = Signal(str)  # tensor name: stats (and before/after plots) are drawn

    def __init__(
        self, session: Session, runner: JobRunner, page: TensorPage, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.runner = runner
        self.details = page.details
        self.plots = page.plots_tabs
        self._pending: set[str] = set()
        page.sig_current_changed.connect(self._on_view_current)
        page.sig_copy_name.connect(self.copy_current_name)
        ev = self.session.events
        ev.selection_changed.connect(self._on_session_selection)
        ev.target_changed.connect(self._on_session_target)
        ev.diffs_changed.connect(self._on_session_diffs)
        ev.cast_changed.connect(self._on_session_cast)

    # ---- view -> session --------------------------------------------------------------------
    def _on_view_current(self, t: TensorInfo | None) -> None:
        if self.session.checkpoint is not None:
            self.session.select(t)

    def copy_current_name(self) -> None:
        if self.session.current is not None:
            QApplication.clipboard().setText(self.session.current.name)

    # ---- session -> view --------------------------------------------------------------------
    def _on_session_selection(self, t: TensorInfo | None) -> None:
        if t is None:
            self.details.clear()
            return
        self._show(t)

    def _on_session_target(self, dt: DType) -> None:
        t = self.session.current
        if t is not None:
            s = self.session
            self.details.set_status(status_text(s.status_of(t), t, dt, s.cast_refusal))

    def _on_session_diffs(self, _diffs: object) -> None:
        t = self.session.current
        if t is not None:
            self.plots.mark(t.name)
            self.details.set_reference(self.session.diff_by_name.get(t.name))

    def _on_session_cast(self, cast: CastResult | None) -> None:
        self.runner.invalidate("before_after")
        t = self.session.current
        if t is not None:
            self._show(t)

    # ---- the pane ---------------------------------------------------------------------------
    def _show(self, t: TensorInfo) -> None:
        s = self.session
        ckpt = s.checkpoint
        assert ckpt is not None
        w = s.quantized_weight(t)
        status = status_text(s.status_of(t), t, s.target, s.cast_refusal)
        if w is not None:  # the numbers and the histogram are of the dequantized values
            status = f"{status} ({w.storage()}; {format_shape(w.shape)})"
        self.details.show_tensor(ckpt, t, status)
        if w is not None:
            self.details.set_logical(w.name, w.shape, w.params)
            self.details.set_values_kind(translate("DetailsPane", "dequantized"))
            self.runner.request(
                "storage",
                storage_figures,
                ckpt,
                w,
                on_result=lambda figures, t=t: self._on_storage(t, figures),
                on_error=lambda _e: None,  # the stats job says what is wrong with the weight
            )
        self.plots.mark(t.name)
        # "drawing" until both requests below exist: a cached result answers at once, and
        # details_ready must not fire before the before/after plots are even asked for
        self._pending = {"stats", "drawing"}
        key = s.stats_key(t)
        cached = s.stats_cache.get(key)
        if cached is not None:
            self._on_stats(t, key, cached)
        else:
            self.runner.request(
                "stats",
                lambda c=ckpt, t=t, w=w: (
                    weight_stats_and_histogram(c, w) if w is not None else stats_and_histogram(c, t)
                ),
                on_result=lambda res, t=t, k=key: self._on_stats(t, k, res),
                on_error=lambda e, t=t: self._on_stats_failed(t, e),
                job=True,
            )
        self.details.set_reference(s.diff_by_name.get(t.name))
        self._request_before_after(t)
        self._done("drawing")

    def _on_stats(self, t: TensorInfo, key: tuple[FileIdentity, str], res: Any) -> None:
        self.session.stats_cache.put(key, res)
        if t is self.session.current:
            self.details.set_stats(*res)
            self._done("stats")

    def _on_storage(self, t: TensorInfo, figures: StorageFigures) -> None:
        if t is self.session.current:
            self.details.set_storage(figures)

    def _on_stats_failed(self, t: TensorInfo, e: BaseException) -> None:
        if t is self.session.current:
            self.details.set_stats_error(error_text(None, e))
            self._done("stats")

    def _request_before_after(self, t: TensorInfo) -> None:
        s = self.session
        cast = s.cast
        if cast is None or s.checkpoint is None:
            return
        rep = cast.by_name.get(t.name)
        if rep is None:
            if not t.dtype.is_float:
                why = translate("DetailsController", "not a float")
            elif t.dtype.name == cast.report.target:
                why = translate("DetailsController", "already {dtype}").format(dtype=t.dtype.name)
            else:
                why = translate(
                    "DetailsController", "kept by a pattern, or a format torch cannot cast exactly"
                )
            self.details.set_cast_text(
                translate("DetailsController", "written unchanged as {dtype} ({why})").format(
                    dtype=t.dtype.name, why=why
                )
            )
            return
        self.details.set_cast(rep)
        if rep.from_ == rep.to:
            return
        self._pending.add("before_after")
        key = (s.stats_key(t)[0], f"{cast.output_path}\0{t.name}")
        cached = s.before_after_cache.get(key)
        if cached is not None:
            self._on_before_after(t, key, cached)
            return
        self.runner.request(
            "before_after",
            before_after_of,
            s.checkpoint,
            t,
            cast.output,
            on_result=lambda ba, t=t, k=key: self._on_before_after(t, k, ba),
            on_error=lambda e, t=t: self._on_before_after_failed(t, e),
        )

    def _on_before_after(self, t: TensorInfo, key: tuple, ba: BeforeAfter) -> None:
        s = self.session
        s.before_after_cache.put(key, ba)
        if t is s.current and s.cast is not None:
            self.details.set_before_after(ba, s.cast.by_name.get(t.name))
            self._done("before_after")

    def _on_before_after_failed(self, t: TensorInfo, e: BaseException) -> None:
        if t is self.session.current:
            self.details.set_error_plot_message(
                translate("DetailsController", "Could not read the saved file: {why}").format(
                    why=error_text(None, e)
                )
            )
            self._done("before_after")

    def _done(self, what: str) -> None:
        self._pending.discard(what)
        t = self.session.current
        if not self._pending and t is not None:
            self.details_ready.emit(t.name)
