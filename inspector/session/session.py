"""What the window shows, as one Qt-free object: the open checkpoint and everything derived from it.

The rules that keep the window honest live here, as methods with tests:

* a reference belongs to the checkpoint it was chosen for: opening another checkpoint drops it
  (:meth:`Session.open` returns it, so the window can offer to compare again);
* results computed for a checkpoint, reference or file that is no longer the current one are
  refused (:meth:`accept_diffs`, :meth:`accept_cast`, :meth:`accept_preview`), so nothing
  stale reaches the screen;
* cached statistics are keyed by file identity (path, size, mtime_ns, inode), so a file
  overwritten under the same path is never shown with the old file's numbers.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from inspector.core.cast.job import CastReport, TensorCastReport
from inspector.core.checkpoint import Checkpoint
from inspector.core.diff import DiffSummary, TensorDiff
from inspector.core.dtypes import DType
from inspector.core.layout import TensorInfo
from inspector.core.model_folder.config import ModelConfig
from inspector.core.model_folder.findings import Finding
from inspector.core.opening import open_checkpoint
from inspector.core.quant.layout import QuantizedWeight
from inspector.core.quantize.report import QuantizeReport
from inspector.core.status import TensorStatus
from inspector.core.summary import DTypeGroups, Summary, tensor_status
from inspector.core.target_rule import TargetSource, pick_target

from .events import SessionEvents
from .file_identity import FileIdentity, ResultCache
from .preview import QuantizePreview


class LazyCheckpoint:
    """A checkpoint opened on first use, from whichever worker thread asks first."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._ckpt: Checkpoint | None = None

    def get(self) -> Checkpoint:
        with self._lock:
            if self._ckpt is None:
                self._ckpt = open_checkpoint(self.path)
            return self._ckpt

    def close(self) -> None:
        with self._lock:
            if self._ckpt is not None:
                self._ckpt.close()
                self._ckpt = None


@dataclass
class CastResult:
    """The last cast of the current checkpoint: its report, where it went, the output (lazily)."""

    report: CastReport
    output_path: str
    output: LazyCheckpoint
    by_name: dict[str, TensorCastReport] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_name = {r.name: r for r in self.report.tensors}


class Session:
    """The open checkpoint, its target dtype, reference, diffs, last cast and selection."""

    def __init__(self, target: DType, chosen: bool = False) -> None:
        """``target``: the default (the window's remembered choice), or with ``chosen`` the
        person's explicit choice (``--target``), which then wins over any config.json."""
        self.events = SessionEvents()
        self.default_target = target
        self.chosen_target: DType | None = target if chosen else None
        self.target_source = TargetSource.CHOSEN if chosen else TargetSource.DEFAULT
        self.checkpoint: Checkpoint | None = None
        self.path: str | None = None
        self.groups = DTypeGroups(())
        self.target = target
        self.reference: Checkpoint | None = None
        self._reference_for: Checkpoint | None = None
        self.diffs: list[TensorDiff] | None = None
        self.diff_by_name: dict[str, TensorDiff] = {}
        self.diff_summary: DiffSummary | None = None
        self.cast: CastResult | None = None
        self.preview: QuantizePreview | None = None
        self.current: TensorInfo | None = None
        self.identities: dict[str, FileIdentity] = {}
        self.model_config: ModelConfig | None = None  # config.json beside the checkpoint
        self.lint: list[Finding] | None = None  # lint of its model folder, when linted
        self.stats_cache = ResultCache(512)
        self.before_after_cache = ResultCache(256)

    # -- the checkpoint -------------------------------------------------------------------
    def open(
        self,
        ckpt: Checkpoint,
        path: str | None = None,
        groups: DTypeGroups | None = None,
        identities: dict[str, FileIdentity] | None = None,
        model_config: ModelConfig | None = None,
    ) -> Checkpoint | None:
        """Show ``ckpt``; return the reference this dropped (it belonged to the previous one)."""
        old = self.checkpoint
        dropped = self.reference
        self._drop_cast()
        self._drop_preview()
        self._drop_reference(keep_open=ckpt)
        self.checkpoint = ckpt
        self.path = path or ckpt.path
        self.groups = groups if groups is not None else DTypeGroups(ckpt.tensors)
        self.identities = identities if identities is not None else identities_of(ckpt)
        self.current = None
        self.model_config = model_config
        self.lint = None
        # the target by the one rule: a config's dtype belongs to this checkpoint only
        config_dtype = model_config.dtype if model_config is not None else None
        choice = pick_target(self.chosen_target, config_dtype, self.default_target)
        self.target, self.target_source = choice.dtype, choice.source
        if old is not None and old is not ckpt and old is not dropped:
            old.close()
        self.events.checkpoint_changed.emit(ckpt, self.path)
        if dropped is not None:
            self.events.reference_changed.emit(None)
            self.events.diffs_changed.emit(None)
        return dropped

    def accept_lint(self, findings: list[Finding], path: str) -> bool:
        """Keep lint's findings if they are for the checkpoint still shown."""
        if path != self.path:
            return False
        self.lint = findings
        return True

    @property
    def summary(self) -> Summary | None:
        return self.groups.summary(self.target) if self.checkpoint is not None else None

    def status_of(self, t: TensorInfo) -> TensorStatus:
        quant = self.groups.quant
        if quant is not None and t.name in quant.part_of:
            return TensorStatus.QUANTIZED
        return tensor_status(t, self.target)

    @property
    def cast_refusal(self) -> str | None:
        """Why a cast of this quantized checkpoint is refused; None when it dequantizes (or
        nothing here is quantized)."""
        quant = self.groups.quant
        return quant.cast_refusal() if quant is not None else None

    def quantized_weight(self, t: TensorInfo) -> QuantizedWeight | None:
        """The quantized weight whose codes ``t`` holds: its values are the dequantized ones."""
        quant = self.groups.quant
        w = quant.weights.get(quant.part_of.get(t.name, "")) if quant is not None else None
        return w if w is not None and w.codes.name == t.name else None

    def choose_target(self, target: DType | None) -> bool:
        """The person picked ``target`` (None: "the config's dtype"): it wins from now on, for
        this checkpoint and the next ones, over any config.json; it is also the new default."""
        self.chosen_target = target
        if target is not None:
            self.default_target = target
        config_dtype = self.model_config.dtype if self.model_config is not None else None
        choice = pick_target(target, config_dtype, self.default_target)
        self.target_source = choice.source
        return self.set_target(choice.dtype)

    def set_target(self, target: DType) -> bool:
        if target.name == self.target.name:
            return False
        self.target = target
        self.events.target_changed.emit(target)
        return True

    # -- the reference --------------------------------------------------------------------
    def set_reference(self, ref: Checkpoint) -> None:
        """Compare the current checkpoint with ``ref`` (its earlier diffs are dropped)."""
        if self.checkpoint is None:
            raise ValueError("open a checkpoint before choosing a reference")
        self._drop_reference(keep_open=ref)
        self.reference = ref
        self._reference_for = self.checkpoint
        self.events.reference_changed.emit(ref)
        self.events.diffs_changed.emit(None)

    def clear_reference(self) -> None:
        had = self.reference is not None or self.diffs is not None
        self._drop_reference()
        if had:
            self.events.reference_changed.emit(None)
            self.events.diffs_changed.emit(None)

    def _drop_reference(self, keep_open: Checkpoint | None = None) -> None:
        ref = self.reference
        self.reference = None
        self._reference_for = None
        self.diffs = None
        self.diff_by_name = {}
        self.diff_summary = None
        if ref is not None and ref is not self.checkpoint and ref is not keep_open:
            ref.close()

    def accept_diffs(self, diffs: list[TensorDiff], a: Checkpoint, b: Checkpoint) -> bool:
        """Take a diff result only if it compares what is shown now; False: it is stale."""
        if a is not self.checkpoint or b is not self.reference or self._reference_for is not a:
            return False
        self.diffs = diffs
        self.diff_by_name = {d.name: d for d in diffs}
        self.diff_summary = DiffSummary.of(diffs)
        self.events.diffs_changed.emit(diffs)
        return True

    # -- the last cast --------------------------------------------------------------------
    def accept_cast(self, report: CastReport, output_path: str, source: Checkpoint) -> bool:
        """Take a cast result only if it was cast from what is shown now; False: it is stale."""
        if source is not self.checkpoint:
            return False
        self._drop_cast()
        self.cast = CastResult(report, output_path, LazyCheckpoint(output_path))
        self.events.cast_changed.emit(self.cast)
        return True

    def _drop_cast(self) -> None:
        if self.cast is not None:
            self.cast.output.close()
            self.cast = None
            self.before_after_cache.clear()
            self.events.cast_changed.emit(None)

    # -- the quantize preview ---------------------------------------------------------------
    def accept_preview(
        self, reports: list[QuantizeReport], source: Checkpoint, ignore: tuple[str, ...]
    ) -> bool:
        """Take a preview only if it measured what is shown now; False: it is stale."""
        if source is not self.checkpoint:
            return False
        self.preview = QuantizePreview(reports, source, ignore)
        self.events.preview_changed.emit(self.preview)
        return True

    def show_scheme(self, scheme: str | None) -> bool:
        """Put one previewed scheme's per-tensor errors in the precision tab (None: none)."""
        if self.preview is None or self.preview.shown == scheme:
            return False
        if scheme is not None and self.preview.report(scheme) is None:
            return False
        self.preview.shown = scheme
        self.events.preview_changed.emit(self.preview)
        return True

    def _drop_preview(self) -> None:
        if self.preview is not None:
            self.preview = None
            self.events.preview_changed.emit(None)

    # -- selection and caches -------------------------------------------------------------
    def select(self, t: TensorInfo | None) -> bool:
        if t is self.current:
            return False
        self.current = t
        self.events.selection_changed.emit(t)
        return True

    def stats_key(self, t: TensorInfo) -> tuple[FileIdentity, str]:
        """The key of a tensor's statistics: the identity its file had when it was opened."""
        ident = self.identities.get(t.file)
        if ident is None:
            ident = self.identities[t.file] = FileIdentity.of(t.file)
        return ident, t.name

    def close(self) -> None:
        self._drop_cast()
        self._drop_preview()
        self._drop_reference()
        if self.checkpoint is not None:
            self.checkpoint.close()
            self.checkpoint = None


def identities_of(ckpt: Checkpoint) -> dict[str, FileIdentity]:
    """The identity of every file of ``ckpt`` now (call it right after opening, off the GUI)."""
    return {h.path: FileIdentity.of(h.path) for h in ckpt.files}
