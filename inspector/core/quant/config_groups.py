"""Reading a ``quantization_config``: which scheme, which modules, which arguments.

compressed-tensors names the modules a group applies to by ``targets`` (a layer class such as
``Linear``, an exact module name, or ``re:`` + a regular expression) and leaves modules out by
``ignore`` in the same language; the most specific match wins (name, then regex, then class).
transformers' fp8 and the other methods list ``modules_to_not_convert`` (substrings of names).
Nothing here reads tensors: it only interprets the JSON, and every malformed field becomes a
reason rather than an exception.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .layout import WeightArgs

CT_FORMATS = {
    "float-quantized", "int-quantized", "naive-quantized", "pack-quantized",
    "nvfp4-pack-quantized", "mxfp4-pack-quantized",
}  # fmt: skip


class ConfigProblem(ValueError):
    """The quantization_config says something we cannot follow (one line, for the person)."""


@dataclass(frozen=True)
class CtGroup:
    name: str
    targets: tuple[str, ...]
    format: str
    args: WeightArgs


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ConfigProblem(f"quantization_config {what} is {v!r}, not a positive integer")
    return v


def weight_args(w: Any, group: str) -> WeightArgs:
    """compressed-tensors' ``weights`` arguments of one group."""
    if not isinstance(w, dict):
        raise ConfigProblem(f"quantization_config group {group!r} has no weights arguments")
    kind = w.get("type", "int")
    strategy = w.get("strategy") or "tensor"
    if kind not in ("int", "float") or not isinstance(strategy, str):
        raise ConfigProblem(f"quantization_config group {group!r}: weights type {kind!r}")
    bits = _int(w.get("num_bits", 8), f"group {group!r} num_bits")
    group_size = w.get("group_size")
    block = w.get("block_structure")
    if strategy in ("group", "tensor_group"):
        group_size = _int(group_size, f"group {group!r} group_size")
    else:
        group_size = None
    if strategy == "block":
        if not (isinstance(block, list) and len(block) == 2):
            raise ConfigProblem(f"quantization_config group {group!r}: block_structure {block!r}")
        block = (_int(block[0], "block_structure"), _int(block[1], "block_structure"))
    else:
        block = None
    scale = w.get("scale_dtype")
    scale_dtype = (
        _SCALE_DTYPES.get(scale.removeprefix("torch.")) if isinstance(scale, str) else None
    )
    return WeightArgs(
        bits, kind, strategy, group_size, block, w.get("symmetric", True) is not False, scale_dtype
    )


_SCALE_DTYPES = {
    "float32": "F32", "bfloat16": "BF16", "float16": "F16", "float8_e4m3fn": "F8_E4M3",
    "uint8": "U8", "float8_e8m0fnu": "F8_E8M0",
}  # fmt: skip


def ct_groups(qc: dict[str, Any]) -> list[CtGroup]:
    groups = qc.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise ConfigProblem("compressed-tensors quantization_config has no config_groups")
    top = qc.get("format")
    out = []
    for name, g in groups.items():
        if not isinstance(g, dict):
            raise ConfigProblem(f"quantization_config group {name!r} is not an object")
        fmt = g.get("format") or top
        if fmt == "mixed-precision" or fmt not in CT_FORMATS:
            raise ConfigProblem(
                f"compressed-tensors format {fmt!r} (group {name!r}) is not one this tool reads"
            )
        targets = g.get("targets") or []
        if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
            raise ConfigProblem(f"quantization_config group {name!r}: targets {targets!r}")
        out.append(CtGroup(name, tuple(targets), fmt, weight_args(g.get("weights"), name)))
    return out


def _specificity(module: str, patterns: tuple[str, ...] | list[str]) -> int:
    """3: named exactly, 2: matched by a ``re:`` pattern, 1: a class name (``Linear``…), 0: no."""
    best = 0
    for p in patterns:
        if p.startswith("re:"):
            try:
                if re.match(p[3:], module):
                    best = max(best, 2)
            except re.error:
                continue
        elif p == module:
            return 3
        elif p[:1].isupper():  # a class name: we cannot see module classes, only names
            best = max(best, 1)
    return best


def ct_group_of(
    module: str, groups: list[CtGroup], fits: Callable[[CtGroup], bool] = lambda g: True
) -> CtGroup | None:
    """The most specific group naming ``module``. Class-name targets cannot be told apart here
    (we see no module classes), nor can two regexes: among equals, a group whose format fits the
    stored tensors wins, then the first by group name (the order compressed-tensors sorts)."""
    ranked = [(_specificity(module, g.targets), g) for g in groups]
    ranked = [r for r in ranked if r[0] > 0]
    if not ranked:
        return None
    best = max(r[0] for r in ranked)
    tied = sorted((g for spec, g in ranked if spec == best), key=lambda g: g.name)
    return next((g for g in tied if fits(g)), tied[0])


def ct_ignored(module: str, ignore: Any) -> bool:
    if not isinstance(ignore, list):
        return False
    patterns = [p for p in ignore if isinstance(p, str) and not p[:1].isupper()]
    return _specificity(module, patterns) >= 2


def not_converted(module: str, skip: Any) -> bool:
    """transformers' ``modules_to_not_convert``: a substring of the module's name."""
    return isinstance(skip, list) and any(isinstance(s, str) and s and s in module for s in skip)
