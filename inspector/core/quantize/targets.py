"""Which tensors a scheme quantizes: the weights of Linear layers, less the ignored ones.

llm-compressor picks modules by class (``targets="Linear"``); a checkpoint has names and shapes
only. A Linear weight here is a 2-D float tensor called ``<module>.weight`` whose module is not
one transformers builds as something else: an embedding (``embed*``, ``wte``, ``wpe``, T5's
``shared`` and ``relative_attention_bias``), GPT-2's ``Conv1D`` (``c_attn``, ``c_proj``,
``c_fc``: stored [in, out]) when config.json says gpt2 or names no model. A norm is 1-D and never
one. MoE routers (``gate``, ``router``) are Linear but left as they are, as llm-compressor's
examples leave them and vLLM builds them. The ``ignore`` list follows llm-compressor: exact
module names, ``re:`` regular expressions (matched from the start), and here also shell globs.
Every weight left out says why in the report.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from ..layout import TensorInfo
from .schemes import Scheme, Strategy

DEFAULT_IGNORE = ("lm_head",)
_FLOATS = ("F32", "F16", "BF16")
_EMBEDDING = re.compile(
    r"(^|\.)(embed[^.]*|wte|wpe|shared|relative_attention_bias|embeddings?(\.[^.]+)?)$"
)
_CONV1D = re.compile(r"(^|\.)(c_attn|c_proj|c_fc|q_attn)$")
CONV1D_MODELS = frozenset({"gpt2", "openai-gpt", "decision_transformer", "imagegpt"})
_ROUTER = re.compile(r"(^|\.)(gate|router)$")
# the layers vLLM fuses, whose NVFP4 global scale llm-compressor shares (FUSED_LAYER_NAMES)
FUSED = (("gate_proj", "up_proj"), ("q_proj", "k_proj", "v_proj"),
         ("q_a_proj", "kv_a_proj_with_mqa"), ("w1", "w3"))  # fmt: skip


class SkipReason(str, Enum):
    IGNORED = "ignored"
    NOT_FLOAT = "not_float"
    F64 = "f64"
    EMPTY = "empty"
    CONV1D = "conv1d"
    ROUTER = "router"
    COLUMNS = "columns"

    def text(self, t: TensorInfo, scheme: Scheme) -> str:
        if self is SkipReason.IGNORED:
            return "matches --ignore"
        if self is SkipReason.NOT_FLOAT:
            return f"{t.dtype.name} is not a float weight"
        if self is SkipReason.EMPTY:
            return "has no values"
        if self is SkipReason.CONV1D:
            return "GPT-2's Conv1D, not a Linear layer (its weight is stored [in, out])"
        if self is SkipReason.ROUTER:
            return "a MoE router: left as llm-compressor's examples leave it (vLLM builds it so)"
        if self is SkipReason.F64:
            return "F64 weights are not quantized (no runtime loads F64 scales); cast to F32 first"
        return (
            f"{t.shape[-1]} inputs are not a multiple of {scheme.name}'s group of "
            f"{scheme.group_size}"
        )


@dataclass
class Skipped:
    tensor: TensorInfo
    module: str
    reason: SkipReason


@dataclass
class QuantizePlan:
    """The Linear weights to quantize (checkpoint order), those left out, and the NVFP4 groups
    whose members share one global scale."""

    scheme: Scheme
    targets: list[TensorInfo] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    fused: dict[str, tuple[str, ...]] = field(default_factory=dict)  # weight → its group
    ignore_config: list[str] = field(default_factory=list)


def module_of(t: TensorInfo) -> str | None:
    """The module a Linear weight belongs to, or None when ``t`` is not one."""
    if len(t.shape) != 2 or not t.name.endswith(".weight"):
        return None
    module = t.name[: -len(".weight")]
    return None if _EMBEDDING.search(module) else module


def ignored(module: str, patterns: Sequence[str]) -> bool:
    for p in patterns:
        if p.startswith("re:"):
            if re.match(p[3:], module):
                return True
        elif module == p or fnmatch.fnmatchcase(module, p):
            return True
    return False


def check_ignore(patterns: Sequence[str]) -> None:
    """Raise ValueError naming an ``re:`` pattern that is not a regular expression."""
    for p in patterns:
        if p.startswith("re:"):
            try:
                re.compile(p[3:])
            except re.error as e:
                raise ValueError(f"--ignore {p!r} is not a regular expression: {e}") from None


def plan_quantize(
    tensors: Sequence[TensorInfo],
    scheme: Scheme,
    ignore: Sequence[str] = DEFAULT_IGNORE,
    model_type: str | None = None,
) -> QuantizePlan:
    """The plan for ``tensors`` (a checkpoint's, in its order). ``ignore_config`` is what
    config.json's ``ignore`` lists: every Linear module left as it was, ``lm_head`` last and
    even when the file has none (a head tied to the embedding is still a module), as
    llm-compressor writes it."""
    check_ignore(ignore)
    plan = QuantizePlan(scheme)
    conv1d = model_type is None or model_type in CONV1D_MODELS
    for t in tensors:
        module = module_of(t)
        if module is None:
            continue
        reason = None
        if conv1d and _CONV1D.search(module):
            reason = SkipReason.CONV1D
        elif ignored(module, ignore):
            reason = SkipReason.IGNORED
        elif _ROUTER.search(module):
            reason = SkipReason.ROUTER
        elif t.dtype.name == "F64":
            reason = SkipReason.F64
        elif 0 in t.shape:
            reason = SkipReason.EMPTY
        elif t.dtype.name not in _FLOATS:
            reason = SkipReason.NOT_FLOAT
        elif t.shape[1] % scheme.columns_unit:
            reason = SkipReason.COLUMNS
        if reason is None:
            plan.targets.append(t)
        else:
            plan.skipped.append(Skipped(t, module, reason))
    # llm-compressor lists the Linear modules left out in model order, where the head comes
    # last; a head tied to the embedding (no lm_head.weight here) stays as it is too
    linear = [s for s in plan.skipped if s.reason is not SkipReason.CONV1D]
    plan.ignore_config = [s.module for s in linear if s.module != "lm_head"]
    has_head = any(t.name == "lm_head.weight" for t in tensors)
    if "lm_head" in ignore or not has_head or any(s.module == "lm_head" for s in linear):
        plan.ignore_config.append("lm_head")
    if scheme.strategy is Strategy.TENSOR_GROUP:
        plan.fused = _fused_groups(plan.targets)
    return plan


def _fused_groups(targets: list[TensorInfo]) -> dict[str, tuple[str, ...]]:
    names = {t.name for t in targets}
    out: dict[str, tuple[str, ...]] = {}
    for t in targets:
        parent, _, leaf = t.name[: -len(".weight")].rpartition(".")
        for group in FUSED:
            if leaf in group:
                members = tuple(f"{parent}.{m}.weight" if parent else f"{m}.weight" for m in group)
                out[t.name] = tuple(m for m in members if m in names)
                break
        else:
            out[t.name] = (t.name,)
    return out
