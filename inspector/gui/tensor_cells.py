"""What one cell of the tensor table says, and the status icons: derived for visible rows only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QStyle

from inspector.core.status import TensorStatus
from inspector.core.wording import format_bytes

from .i18n import translate
from .table_text import DIFF_STATUS_TEXT, format_float, format_shape, status_cell
from .tensor_columns import Col

if TYPE_CHECKING:
    from inspector.core.dtypes import DType
    from inspector.core.layout import TensorInfo

_ICONS: dict[str, QIcon] = {}


def cell_text(
    t: TensorInfo,
    status: str,
    col: int,
    target: DType | None,
    cast: Mapping[str, Any] | None,
    diff: Mapping[str, Any],
) -> str:
    """``cast``: name -> TensorCastReport while a report is shown (a tensor missing from it was
    not cast: "—"), None when none is; ``diff``: name -> TensorDiff against a reference."""
    if col == Col.NAME:
        return t.name
    if col == Col.DTYPE:
        return t.dtype.name
    if col == Col.SHAPE:
        return format_shape(t.shape)
    if col == Col.PARAMS:
        return f"{t.numel:,}"
    if col == Col.SIZE:
        return format_bytes(t.nbytes)
    if col == Col.STATUS:
        return status_cell(status, t, target) if target else ""
    if col == Col.CAST_ERR:
        r = cast.get(t.name) if cast is not None else None
        if r is None or r.from_ == r.to:
            return "—" if cast is not None else ""
        if r.lossless:
            return translate("TensorTable", "0 (lossless)")
        if r.nan:
            return translate("TensorTable", "{n} NaN").format(n=f"{r.nan:,}")
        if r.overflow:
            return translate("TensorTable", "{n} overflow").format(n=f"{r.overflow:,}")
        if r.underflow and r.max_rel_err == 1:  # not rounding: a value became 0
            return translate("TensorTable", "{n} underflow").format(n=f"{r.underflow:,}")
        return format_float(r.max_rel_err)
    if col == Col.REF_DIFF:
        d = diff.get(t.name)
        if d is None:
            return ""
        if d.status in DIFF_STATUS_TEXT:
            return translate("TensorTable", DIFF_STATUS_TEXT[d.status])
        if d.max_abs_diff == 0:
            return translate("TensorTable", "0 (equal)")
        return format_float(d.max_abs_diff)
    return ""


def status_icon(status: str) -> QIcon:
    """The style's icon for a status (``"intended"``: kept in F32 on purpose), made once."""
    icon = _ICONS.get(status)
    if icon is None:
        style = QApplication.style()
        sp = {
            TensorStatus.DIFFERS: QStyle.StandardPixmap.SP_MessageBoxWarning,
            TensorStatus.MATCH: QStyle.StandardPixmap.SP_DialogApplyButton,
            TensorStatus.KEPT: QStyle.StandardPixmap.SP_MessageBoxInformation,
            TensorStatus.QUANTIZED: QStyle.StandardPixmap.SP_FileDialogDetailedView,
            "intended": QStyle.StandardPixmap.SP_MessageBoxQuestion,
        }[status]
        if style is None:  # no QApplication yet
            return QIcon()
        icon = _ICONS[status] = style.standardIcon(sp)
    return icon
