"""How the tensor table words its cells: shapes, errors, statuses, and the natural sort key."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP

from inspector.core.dtypes import DType
from inspector.core.layout import TensorInfo
from inspector.core.status import DiffStatus, TensorStatus
from inspector.core.summary import Summary, format_count
from inspector.core.wording import format_bytes

from .i18n import translate

# what the reference column says where there is no number (translated when shown)
DIFF_STATUS_TEXT = {
    DiffStatus.SHAPE_MISMATCH: QT_TRANSLATE_NOOP("TensorTable", "shape mismatch"),
    DiffStatus.ONLY_A: QT_TRANSLATE_NOOP("TensorTable", "not in reference"),
    DiffStatus.ONLY_B: QT_TRANSLATE_NOOP("TensorTable", "only in reference"),
}


def format_shape(shape: Sequence[int]) -> str:
    if not shape:
        return translate("TableText", "[] (scalar)")
    return "[" + ", ".join(str(d) for d in shape) + "]"


def format_float(x: float | None) -> str:
    if x is None:
        return "—"
    if x == 0:
        return translate("TableText", "0 (lossless)")
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    return f"{x:.3g}"


def cast_error_value(r: Any) -> float | None:
    """One number per cast tensor: 0 if lossless, inf if values overflowed or became NaN."""
    if r is None or r.from_ == r.to:
        return None
    if r.lossless:
        return 0.0
    if (r.overflow or 0) + (r.nan or 0):
        return float("inf")
    return r.max_rel_err


def cast_error_tooltip(r: Any) -> str | None:
    """The Rel. error cell's tooltip: the largest error beside the typical ones, and what
    overflowed or underflowed."""
    if r is None or r.from_ == r.to or r.lossless or r.max_rel_err is None:
        return None
    return translate(
        "TableText",
        "Relative error: largest {max}, typical (mean) {mean}, RMS {rms}\n"
        "overflow {o} · underflow {u} (non-zero values that became 0: an error of 1 each)",
    ).format(
        max=format_float(r.max_rel_err),
        mean=format_float(r.mean_rel_err),
        rms=format_float(r.rms_rel_err),
        o=f"{r.overflow or 0:,}",
        u=f"{r.underflow or 0:,}",
    )


def status_cell(status: TensorStatus, t: TensorInfo, target: DType) -> str:
    """The status column's text, short: the icon says differs/kept/matches, the text the dtypes
    (the column stays narrow so the names get the room)."""
    if status is TensorStatus.DIFFERS:
        return f"{t.dtype.name} → {target.name}"
    if status is TensorStatus.KEPT:
        return translate("TableText", "not a float")
    if status is TensorStatus.QUANTIZED:
        return translate("TableText", "quantized")
    return ""


def status_text(status: str, t: TensorInfo, target: DType, refusal: str | None = None) -> str:
    """The status in words; ``refusal``: why a cast of the quantized checkpoint is refused."""
    if status is TensorStatus.DIFFERS:
        return translate("TableText", "differs: {dtype} → {target}").format(
            dtype=t.dtype.name, target=target.name
        )
    if status is TensorStatus.KEPT:
        return translate("TableText", "kept (not a float)")
    if status is TensorStatus.QUANTIZED:
        if refusal is not None:
            return translate("TableText", "quantized: a cast is refused")
        return translate("TableText", "quantized: a cast dequantizes it")
    return translate("TableText", "matches {target}").format(target=target.name)


def status_tooltip(t: TensorInfo, status: str, target: str, refusal: str | None = None) -> str:
    if status is TensorStatus.DIFFERS:
        return translate(
            "TensorTable",
            "Stored as {dtype}, the model uses {target}. PyTorch's load_state_dict casts it "
            "silently; burn-store keeps {dtype} and fails with a dtype mismatch.",
        ).format(dtype=t.dtype.name, target=target)
    if status is TensorStatus.KEPT:
        return translate(
            "TensorTable", "{dtype} is not a float type: casting leaves it unchanged."
        ).format(dtype=t.dtype.name)
    if status is TensorStatus.QUANTIZED and refusal is not None:
        return translate(
            "TensorTable",
            "Codes or scales of a quantized weight, stored so on purpose. A cast is refused, so "
            "nothing writes them as values: {why}",
        ).format(why=refusal)
    if status is TensorStatus.QUANTIZED:
        return translate(
            "TensorTable",
            "Codes or scales of a quantized weight, stored so on purpose. A cast dequantizes the "
            "weight to {target} and leaves its scales out; casting the codes as values would "
            "corrupt it.",
        ).format(target=target)
    return translate("TensorTable", "Already {target}.").format(target=target)


def intended_tooltip(target: str) -> str:
    return translate(
        "TensorTable",
        "F32 in a {target} model: norms, rotary inv_freq and MoE routers are often kept in F32 on "
        "purpose. Casting them loses precision the model wants; keep them with the fp32-norms "
        "globs (cast dialog, or --keep-preset).",
    ).format(target=target)


def summary_text(s: Summary) -> str:
    """The summary line in the window's language (the CLI prints core's English one)."""
    parts = [
        translate("TableText", "{n} of {total} tensors differ from {target}").format(
            n=f"{s.n_differ:,}", total=f"{s.n_tensors:,}", target=s.target
        ),
    ]
    if s.n_quantized:
        parts.append(
            translate("TableText", "{n} quantized ({scheme})").format(
                n=f"{s.n_quantized:,}", scheme=s.quant_scheme
            )
        )
    parts += [
        translate("TableText", "{n} params").format(n=format_count(s.params)),
        format_bytes(s.nbytes),
    ]
    kinds = {**s.differing_dtypes, **s.kept_dtypes}
    if kinds:
        parts.append(" ".join(f"{k}×{v}" for k, v in kinds.items()))
    return " · ".join(parts)
