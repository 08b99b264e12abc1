"""Ask where to save the cast checkpoint, to which dtype, and which tensors to keep as they are."""

from __future__ import annotations

import os
from collections.abc import Container
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.checkpoint import Checkpoint
from inspector.core.dtypes import CAST_TARGETS, DTYPES, DType
from inspector.core.formats.burnpack import FORMAT_NAME as BURNPACK
from inspector.core.model_folder.intended import FP32_NORMS
from inspector.core.save.output_names import PICKLE_SUFFIXES
from inspector.gui.i18n import translate

if TYPE_CHECKING:
    from inspector.core.quant.layout import QuantLayout


def proposed_output(ckpt: Checkpoint, target: DType) -> str:
    """``<stem>.<target>.safetensors`` next to a file (``.bpk`` for a Burnpack one: it stays
    burn's); ``<folder>.<target>`` for a sharded one."""
    if ckpt.is_sharded or ckpt.folder is not None:  # a model folder gives a model folder
        folder = ckpt.folder or os.path.dirname(os.path.abspath(ckpt.index_path or ckpt.path))
        return f"{os.path.abspath(folder).rstrip(os.sep)}.{target.name}"
    path = os.path.abspath(ckpt.files[0].path)
    stem = os.path.basename(path)
    out_suffix = ".bpk" if ckpt.files[0].format == BURNPACK else ".safetensors"
    for suffix in (".safetensors", ".bpk", ".gguf", *PICKLE_SUFFIXES):  # converted: safetensors
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return os.path.join(os.path.dirname(path), f"{stem}.{target.name}{out_suffix}")


def parse_keep(text: str) -> tuple[str, ...]:
    """Space or comma separated glob patterns."""
    return tuple(p for p in text.replace(",", " ").split() if p)


def count_plan(
    ckpt: Checkpoint, target: DType, keep: tuple[str, ...], skip: Container[str] = ()
) -> tuple[int, int, int]:
    """(tensors that will change dtype, kept by --keep, not floats) — as the cast engine plans."""
    from inspector.core.cast.job import plan_cast

    change = kept = nonfloat = 0
    for t, dt in plan_cast(ckpt, target, keep=keep):
        if t.name in skip:  # codes and scales of a quantized weight: dequantized, not cast
            continue
        if not t.dtype.is_float:
            nonfloat += 1
        elif dt.name != t.dtype.name:
            change += 1
        elif t.dtype.name != target.name:
            kept += 1
    return change, kept, nonfloat


class CastDialog(QDialog):
    def __init__(
        self,
        ckpt: Checkpoint,
        target: DType,
        parent: QWidget | None = None,
        keep: str = "",
        quant: QuantLayout | None = None,
    ) -> None:
        """``quant``: the checkpoint's quantized weights; the dialog then dequantizes (or says
        why a cast is refused, before anything runs)."""
        super().__init__(parent)
        self.quant = quant if quant is not None and (quant.weights or quant.unsupported) else None
        self.setWindowTitle(
            translate("CastDialog", "Dequantize & save")
            if self.quant is not None
            else translate("CastDialog", "Cast & save")
        )
        self.ckpt = ckpt
        self.setMinimumWidth(560)
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.target_box = QComboBox()
        self.target_box.addItems(list(CAST_TARGETS))
        self.target_box.setCurrentText(target.name)
        self.out_edit = QLineEdit(proposed_output(ckpt, target))
        self._auto_out = self.out_edit.text()
        browse = QPushButton(translate("CastDialog", "Browse…"))
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.out_edit, 1)
        row.addWidget(browse)
        self.keep_edit = QLineEdit(keep)
        self.keep_edit.setPlaceholderText(
            translate("CastDialog", "e.g. *.LayerNorm.* *inv_freq  (glob patterns, kept as is)")
        )
        form.addRow(translate("CastDialog", "Target dtype:"), self.target_box)
        form.addRow(
            translate("CastDialog", "Save as:")
            if not (ckpt.is_sharded or ckpt.folder is not None)
            else translate("CastDialog", "Save into folder:"),
            row,
        )
        keep_row = QHBoxLayout()
        keep_row.addWidget(self.keep_edit, 1)
        self.norms_button = QPushButton(translate("CastDialog", "+ F32 norms"))
        self.norms_button.setToolTip(
            translate(
                "CastDialog",
                "Add the fp32-norms globs: norms, rotary inv_freq and MoE routers, which models "
                "keep in F32 on purpose",
            )
        )
        self.norms_button.clicked.connect(self._add_norm_globs)
        keep_row.addWidget(self.norms_button)
        form.addRow(translate("CastDialog", "Keep dtype of:"), keep_row)
        lay.addLayout(form)
        self.plan_label = QLabel()
        self.plan_label.setWordWrap(True)
        lay.addWidget(self.plan_label)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(
            translate("CastDialog", "Dequantize && Save")
            if self.quant is not None
            else translate("CastDialog", "Cast && Save")
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self.target_box.currentTextChanged.connect(self._target_changed)
        self.keep_edit.textChanged.connect(self._update_plan)
        self.out_edit.textChanged.connect(self._update_plan)
        self._update_plan()

    # -- values -----------------------------------------------------------------------------
    @property
    def target(self) -> DType:
        return DTYPES[self.target_box.currentText()]

    @property
    def output(self) -> str:
        return os.path.abspath(os.path.expanduser(self.out_edit.text().strip()))

    @property
    def keep(self) -> tuple[str, ...]:
        return parse_keep(self.keep_edit.text())

    def problem(self) -> str | None:
        if self.quant is not None and (refusal := self.quant.cast_refusal()) is not None:
            return translate("CastDialog", "Cannot dequantize: {why}.").format(why=refusal)
        out = self.out_edit.text().strip()
        if not out:
            return translate("CastDialog", "Choose where to save.")
        src = {os.path.abspath(h.path) for h in self.ckpt.files}
        if self.ckpt.index_path:
            src.add(os.path.abspath(self.ckpt.index_path))
            src.add(os.path.dirname(os.path.abspath(self.ckpt.index_path)))
        if self.output in src:
            return translate(
                "CastDialog",
                "The output would overwrite the checkpoint being read; choose another name.",
            )
        parent = os.path.dirname(self.output)
        if not os.path.isdir(parent):
            return translate("CastDialog", "Folder {folder} does not exist.").format(folder=parent)
        return None

    # -- slots ------------------------------------------------------------------------------
    def _target_changed(self, name: str) -> None:
        if self.out_edit.text() == self._auto_out:
            self._auto_out = proposed_output(self.ckpt, DTYPES[name])
            self.out_edit.setText(self._auto_out)
        self._update_plan()

    def _update_plan(self) -> None:
        skip = self.quant.part_of if self.quant is not None else ()
        change, kept, nonfloat = count_plan(self.ckpt, self.target, self.keep, skip)
        parts = [
            translate("CastDialog", "{n} of {total} tensors will be cast to {target}").format(
                n=change, total=len(self.ckpt.tensors), target=self.target.name
            )
        ]
        if kept:
            parts.append(translate("CastDialog", "{n} kept by pattern").format(n=kept))
        if nonfloat:
            parts.append(translate("CastDialog", "{n} kept (not a float)").format(n=nonfloat))
        text = "; ".join(parts) + "."
        if self.quant is not None:
            text = (
                translate(
                    "CastDialog",
                    "{n} quantized weights ({scheme}) are dequantized to {target}: their scales "
                    "are left out and config.json loses its quantization_config.",
                ).format(
                    n=len(self.quant.weights),
                    scheme=self.quant.scheme_text,
                    target=self.target.name,
                )
                + "<br>"
                + text
            )
        problem = self.problem()
        if problem:
            text += f"<br><b>{problem}</b>"
        elif os.path.exists(self.output):
            text += "<br>" + translate("CastDialog", "The existing output will be replaced.")
        self.plan_label.setText(text)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(problem is None)

    def _add_norm_globs(self) -> None:
        have = parse_keep(self.keep_edit.text())
        more = [g for g in FP32_NORMS if g not in have]
        self.keep_edit.setText(" ".join((*have, *more)))

    def _browse(self) -> None:
        if self.ckpt.is_sharded or self.ckpt.folder is not None:
            path = QFileDialog.getExistingDirectory(
                self, translate("CastDialog", "Save shards into folder"), self.output
            )
        else:
            filters = ["safetensors (*.safetensors)", "Burnpack, burn's format (*.bpk)"]
            path, _ = QFileDialog.getSaveFileName(
                self,
                translate("CastDialog", "Save cast checkpoint"),
                self.output,
                ";;".join(filters),
                filters[self.output.lower().endswith(".bpk")],
            )
        if path:
            self.out_edit.setText(path)
