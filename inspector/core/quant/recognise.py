"""Which tensors of a checkpoint are quantized weights, from config.json's
``quantization_config`` and the tensors' names, dtypes and shapes (header only).

``recognise`` returns None for a plain checkpoint. With a config the scheme is *confirmed*;
without one it is guessed from names ("looks like …") and a cast refuses it. Every mismatch
between the config and the tensors is a problem line: lint shows it, a cast refuses.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..layout import TensorInfo
from .burn_qfloat import burn_layout
from .by_scheme import (
    FP8_DTYPES,
    bitsandbytes,
    compressed_tensors,
    fp8_block,
    gpt_oss,
    gptq_awq,
)
from .config_groups import ConfigProblem
from .gguf_blocks import gguf_layout
from .layout import QuantLayout
from .schemes import QuantScheme


def recognise(tensors: Iterable[TensorInfo], quant_config: Any = None) -> QuantLayout | None:
    by_name = {t.name: t for t in tensors}
    blocks = gguf_layout(by_name.values())  # a GGUF file says its types itself
    if blocks is not None:
        return blocks
    burn = burn_layout(by_name.values())  # and so does a Burnpack file, tensor by tensor
    if burn is not None:
        return burn
    if quant_config is not None:
        return _from_config(by_name, quant_config)
    return _from_names(by_name)


def _from_config(by_name: dict[str, TensorInfo], qc: Any) -> QuantLayout:
    if not isinstance(qc, dict):
        layout = QuantLayout("quantization_config", True)
        layout.unsupported = (
            f"config.json's quantization_config is {type(qc).__name__} {str(qc)[:40]!r}, not "
            "an object; the scheme is unknown, so a cast is refused"
        )
        return layout
    method = qc.get("quant_method")
    transforms = qc.get("transform_config")
    if transforms:  # QuIP/SpinQuant rotations: dequantized weights are in the rotated basis
        layout = QuantLayout(f"quant_method {method}", True)
        layout.unsupported = (
            "config.json's quantization_config has a transform_config (rotations such as "
            "QuIP), which this tool does not apply; a cast would write rotated weights, so it "
            "is refused"
        )
        return layout
    try:
        layout = _by_method(by_name, qc, method)
        if layout is not None:
            _uncovered_codes(by_name, layout)
            return layout
    except ConfigProblem as e:
        layout = QuantLayout(f"quant_method {method}", True)
        layout.unsupported = str(e)
        return layout
    layout = QuantLayout(f"quant_method {method!r}", True)
    layout.unsupported = (
        f"config.json has a quantization_config with quant_method {method!r}, which this tool "
        "cannot dequantize; a cast would write its codes as values, so it is refused"
    )
    return layout


def _by_method(by_name: dict[str, TensorInfo], qc: dict, method: Any) -> QuantLayout | None:
    if method == "fp8":
        return fp8_block(by_name, qc, confirmed=True)
    if method == "compressed-tensors":
        return compressed_tensors(by_name, qc)
    if method == "mxfp4":
        return gpt_oss(by_name, confirmed=True)
    if method in ("gptq", "awq"):
        return gptq_awq(by_name, qc, QuantScheme(method), confirmed=True)
    if method == "bitsandbytes":
        return bitsandbytes(by_name, confirmed=True)
    return None


_CODE_SUFFIXES = (".qweight", ".weight_packed", "_blocks")


def _uncovered_codes(by_name: dict[str, TensorInfo], layout: QuantLayout) -> None:
    """Tensors stored as quantized codes that the config's scheme did not claim (no scale, or
    another scheme's names): a cast would write them as values. Each is a problem."""
    int_codes = any(
        w.scheme in (QuantScheme.CT_INT, QuantScheme.BNB_8BIT) for w in layout.weights.values()
    )
    for name, t in by_name.items():
        if name in layout.part_of:
            continue
        dt = t.dtype.name
        if (
            dt in FP8_DTYPES
            or (name.endswith(_CODE_SUFFIXES) and dt in ("I32", "U8"))
            or (int_codes and dt == "I8" and name.endswith(".weight"))
            or name.endswith(("_scale_inv", ".weight_scale", ".weight_zero_point", ".qzeros"))
        ):
            layout.problems.append(
                f"{name!r} ({dt}) is stored as quantized codes or scales that {layout.scheme_text} "
                "does not describe (a missing scale, or another scheme's tensors)"
            )
    guess = _from_names({n: t for n, t in by_name.items() if n not in layout.part_of})
    if guess is not None and guess.weights and not layout.problems:
        layout.problems.append(
            f"the tensors look like {guess.scheme_text}, which the config's "
            f"{layout.scheme_text} does not describe"
        )


# -- no config: guessed from names ------------------------------------------------------------


def _from_names(by_name: dict[str, TensorInfo]) -> QuantLayout | None:
    names = by_name.keys()
    has = lambda suffix: any(n.endswith(suffix) for n in names)  # noqa: E731
    if any(
        n.endswith(".weight_scale_inv")
        and getattr(by_name.get(n[: -len("_scale_inv")]), "dtype_name", "") in FP8_DTYPES
        for n in names
    ):
        guess = fp8_block(by_name, {"weight_block_size": _guess_block(by_name)}, False)
    elif _has_packed(by_name) or (has(".weight_scale") and _has_fp8_or_int8_weight(by_name)):
        guess = _ct_guess(by_name)
    elif has(".qweight"):
        guess = gptq_awq(by_name, {}, QuantScheme.GPTQ, False)
        guess.scheme_text = "GPTQ or AWQ"
    elif has("_blocks") and has("_scales"):
        guess = gpt_oss(by_name, False)
    elif has(".weight.absmax") or has(".SCB"):
        guess = bitsandbytes(by_name, False)
    else:
        return None
    return guess if guess.weights else None


def _guess_block(by_name: dict[str, TensorInfo]) -> list[int] | None:
    for name, s in by_name.items():
        w = by_name.get(name.removesuffix("_scale_inv")) if name.endswith("_scale_inv") else None
        if w is not None and len(w.shape) == 2 and len(s.shape) == 2 and all(s.shape):
            return [max(1, math.ceil(w.shape[0] / s.shape[0])), max(1, math.ceil(w.shape[1] / s.shape[1]))]  # fmt: skip
    return None


def _has_packed(by_name: dict[str, TensorInfo]) -> bool:
    return any(
        n.endswith(".weight_packed") and t.dtype.name in ("I32", "U8") for n, t in by_name.items()
    )


def _has_fp8_or_int8_weight(by_name: dict[str, TensorInfo]) -> bool:
    return any(
        n.endswith(".weight") and t.dtype.name in (*FP8_DTYPES, "I8") and n + "_scale" in by_name
        for n, t in by_name.items()
    )


def _ct_guess(by_name: dict[str, TensorInfo]) -> QuantLayout:
    sample_packed = next((t for n, t in by_name.items() if n.endswith(".weight_packed")), None)
    if sample_packed is None:
        sample = next(
            t for n, t in by_name.items() if n.endswith(".weight") and n + "_scale" in by_name
        )
        fmt, args = ("float-quantized", {"type": "float", "strategy": "channel"}) \
            if sample.dtype.name in FP8_DTYPES else ("int-quantized", {"type": "int", "strategy": "channel"})  # fmt: skip
    elif sample_packed.dtype.name == "U8":
        global_scale = any(n.endswith(".weight_global_scale") for n in by_name)
        fmt = "nvfp4-pack-quantized" if global_scale else "mxfp4-pack-quantized"
        args = {"type": "float", "num_bits": 4, "strategy": "group",
                "group_size": 16 if global_scale else 32}  # fmt: skip
    else:
        fmt, args = "pack-quantized", {"type": "int", "num_bits": 4, "strategy": "channel"}
    qc = {"format": fmt, "config_groups": {"guess": {"targets": ["Linear"], "weights": args}}}
    layout = compressed_tensors(by_name, qc)
    layout.confirmed = False
    layout.scheme_text = f"compressed-tensors {fmt}"
    return layout
