"""lint's quantization checks: the config and the tensors agree, and (``--stats``) the scales
and codes hold usable numbers. Quantized tensors are not judged against the config's dtype:
that is how they are meant to be stored."""

from __future__ import annotations

import re

import numpy as np

from ..layout import TensorInfo
from ..quant.config_groups import not_converted
from ..quant.layout import Part, QuantLayout
from ..quant.recognise import recognise
from .config import ModelConfig
from .findings import Finding, Severity, finding

_FP8_NAN = {"F8_E4M3": (0x7F, 0xFF), "F8_E5M2": None}


def quant_layout_of(config: ModelConfig | None, tensors: list[TensorInfo]) -> QuantLayout | None:
    return recognise(tensors, config.quant_config if config is not None else None)


def lint_quant(
    quant: QuantLayout | None, config: ModelConfig | None, tensors: list[TensorInfo]
) -> list[Finding]:
    if quant is None:
        return []
    out: list[Finding] = []
    if not quant.confirmed:
        out.append(
            finding(
                Severity.WARNING,
                "quant_unconfirmed",
                "quant_unconfirmed",
                sorted(quant.weights)[:20],
                scheme=quant.scheme_text,
                n=len(quant.weights),
            )
        )
    if quant.problems:
        out.append(
            finding(
                Severity.ERROR,
                "quant_mismatch",
                "quant_mismatch",
                files=["config.json"],
                scheme=quant.scheme_text,
                n=len(quant.problems),
                problem=quant.problems[0],
            )
        )
    if quant.notes:
        out.append(
            finding(
                Severity.WARNING,
                "quant_scale_dtype",
                "quant_scale_dtype",
                files=["config.json"],
                n=len(quant.notes),
                note=quant.notes[0],
            )
        )
    unused = _unused_ignores(config, tensors)
    if unused:
        out.append(
            finding(
                Severity.INFO,
                "quant_ignore_unused",
                "quant_ignore_unused",
                files=["config.json"],
                entries=", ".join(unused),
            )
        )
    return out


def _unused_ignores(config: ModelConfig | None, tensors: list[TensorInfo]) -> list[str]:
    """``ignore`` / ``modules_to_not_convert`` entries that name no module of the checkpoint
    (a typo there quantizes, or leaves out, the wrong layers)."""
    qc = config.quant_config if config is not None else None
    if not isinstance(qc, dict):
        return []
    modules = {t.name.rsplit(".", 1)[0] for t in tensors}
    unused = []
    for key in ("ignore", "modules_to_not_convert"):
        entries = qc.get(key)
        if not isinstance(entries, list):
            continue
        for e in entries:
            if not isinstance(e, str) or not e or e[:1].isupper():  # class names: unseen
                continue
            if e.startswith("re:"):
                try:
                    hit = any(re.match(e[3:], m) for m in modules)
                except re.error:
                    hit = False
            elif key == "ignore":
                hit = e in modules
            else:
                hit = any(not_converted(m, [e]) for m in modules)
            if not hit:
                unused.append(e)
    return unused


def lint_quant_values(ckpt, quant: QuantLayout | None) -> list[Finding]:
    """Scales that are 0, negative, inf or NaN; FP8 codes that are NaN (reads the data)."""
    if quant is None:
        return []
    bad_scales, nan_codes = [], []
    for w in quant.weights.values():
        scale = w.parts.get(Part.SCALE)
        if scale is not None and scale.dtype.is_float and scale.dtype.name in _FLOATS:
            v = np.asarray(ckpt.view(scale)).astype(np.float32)
            if not np.isfinite(v).all() or (v <= 0).any():
                bad_scales.append(w.name)
        elif (
            scale is not None
            and scale.dtype.name == "U8"
            and w.scheme.value.startswith("mxfp4")
            and (np.asarray(ckpt.view(scale)) == 0xFF).any()  # E8M0 NaN
        ):
            bad_scales.append(w.name)
        nan = _FP8_NAN.get(w.codes.dtype.name, ())
        if nan:
            for chunk in ckpt.iter_chunks(w.codes):
                if np.isin(chunk.view(np.uint8), nan).any():
                    nan_codes.append(w.name)
                    break
    out = []
    if bad_scales:
        out.append(
            finding(
                Severity.ERROR,
                "quant_bad_scales",
                "quant_bad_scales",
                bad_scales[:20],
                n=len(bad_scales),
            )
        )
    if nan_codes:
        out.append(
            finding(
                Severity.ERROR,
                "quant_nan_codes",
                "quant_nan_codes",
                nan_codes[:20],
                n=len(nan_codes),
            )
        )
    return out


_FLOATS = ("F32", "F16", "BF16", "F8_E4M3", "F8_E5M2", "F64")
