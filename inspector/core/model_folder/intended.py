"""Tensors a model keeps in F32 on purpose, in an otherwise half-precision model.

transformers keeps some modules in F32 (``_keep_in_fp32_modules``: norms in T5-style models, MoE
router gates, rotary ``inv_freq``), and quantization configs list ``modules_to_not_convert``. Such
an F32 tensor in a BF16 model is probably deliberate: it is shown as "kept in F32 on purpose?",
and ``--keep-preset fp32-norms`` keeps these in a cast.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence

from ..layout import TensorInfo

# What the fp32-norms preset matches, and why (README lists these too):
FP32_NORMS = (
    "*norm*",  # norm weights and biases: input_layernorm, norm, layer_norm, ln_f's layernorm
    "*Norm*",  # the same capitalised (BERT's LayerNorm); globs are case-sensitive, like --keep
    "*ln_[12f].*",  # GPT-2's layer norms: h.0.ln_1, h.0.ln_2, ln_f
    "*inv_freq*",  # rotary embedding frequencies (a buffer computed in F32)
    "*router*",  # MoE routers (Mixtral/Switch keep the gate in F32)
    "*.mlp.gate.weight",  # the MoE gate as Qwen/Mixtral name it (not gate_proj)
    "*.block_sparse_moe.gate.weight",
)
PRESETS = {"fp32-norms": FP32_NORMS}


def preset_globs(name: str, modules_to_not_convert: Sequence[str] = ()) -> tuple[str, ...]:
    """The keep globs of a preset, plus the config's ``modules_to_not_convert`` as ``*module*``."""
    return PRESETS[name] + tuple(f"*{m}*" for m in modules_to_not_convert)


def is_intended(t: TensorInfo, globs: Sequence[str]) -> bool:
    """An F32 tensor whose name matches a preset glob (only F32: an F64 norm is not deliberate)."""
    return t.dtype.name == "F32" and any(fnmatch.fnmatchcase(t.name, g) for g in globs)


def suggests_fp32_norms(
    tensors: Sequence[TensorInfo], target_name: str, globs: Sequence[str]
) -> bool:
    """Whether a cast to ``target_name`` should keep the fp32-norms preset: some F32 tensor the
    model keeps in F32 on purpose would otherwise be cast. ``check`` then suggests
    ``--keep-preset fp32-norms`` and the window's cast dialog starts with those globs: the two
    fixes write the same file."""
    return target_name != "F32" and any(is_intended(t, globs) for t in tensors)


class IntendedMatcher:
    """:func:`is_intended` with the globs compiled into one pattern (the table asks per row)."""

    def __init__(self, globs: Sequence[str]) -> None:
        self._match = re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs)).match

    def __call__(self, t: TensorInfo) -> bool:
        return t.dtype_name == "F32" and self._match(t.name) is not None
