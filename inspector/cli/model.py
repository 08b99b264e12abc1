"""Model-folder parts of the command line: ``--target config``, the "kept in F32 on purpose?"
annotation, the config-vs-weights line of ``check``, and ``lint PATH [--json] [--stats]``."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.errors import CheckpointError
from .output import counted, out, printable

if TYPE_CHECKING:
    from ..core.model_folder.config import ModelConfig
    from ..core.quant.layout import QuantLayout

CONFIG_TARGET = "config"


@dataclass
class FolderConfig:
    """config.json beside the checkpoint, read once per command: the config, or why not."""

    config: ModelConfig | None
    problem: CheckpointError | None = None

    @classmethod
    def of(cls, path: str) -> FolderConfig:
        from ..core.model_folder.config import read_model_config

        try:
            return cls(read_model_config(path))
        except CheckpointError as e:
            return cls(None, e)

    def quant(self, tensors: list) -> QuantLayout | None:
        """The checkpoint's quantized weights, by its quantization_config (or names alone)."""
        from ..core.quant.recognise import recognise

        return recognise(tensors, self.config.quant_config if self.config is not None else None)


def resolve_target(args: argparse.Namespace, folder: FolderConfig):
    """The target by the one rule (core.target_rule): ``--target`` wins; else config.json's
    dtype; else F32. ``--target config`` insists on the config: a clear error when it has none."""
    from ..core.target_rule import pick_target

    if args.target == CONFIG_TARGET:
        if folder.problem is not None:
            raise folder.problem
        config = folder.config
        if config is None:
            raise CheckpointError(args.path, "--target config: there is no config.json beside it")
        if config.dtype is None:
            raise CheckpointError(
                config.path, '--target config: it names no dtype (torch_dtype / dtype, or "auto")'
            )
        return config.dtype
    config = folder.config
    return pick_target(args.target, config.dtype if config is not None else None).dtype


def castable(path: str, target):
    """A target that came from config.json must still be one cast can write."""
    from ..core.dtypes import parse_cast_target

    try:
        return parse_cast_target(target.name)
    except ValueError as e:
        raise CheckpointError(path, str(e)) from None


def intended_globs(folder: FolderConfig) -> tuple[str, ...]:
    """fp32-norms, plus the config's modules_to_not_convert when there is a config."""
    from ..core.model_folder.intended import preset_globs

    config = folder.config
    return preset_globs("fp32-norms", config.modules_to_not_convert if config else ())


def config_line(folder: FolderConfig, tensors, target) -> str | None:
    """When config.json's dtype and the weights disagree, say so (check prints it)."""
    from ..core.model_folder.config import weights_disagree

    if folder.problem is not None:
        return f"note: {folder.problem}"
    config = folder.config
    if config is None or config.dtype is None:
        return None
    said = weights_disagree(config, tensors)
    if said is None:
        return f"{config.describe()}: the weights agree"
    return f"note: {said.line()}" + (
        "" if config.dtype.name == target.name else f" (checked against {target.name})"
    )


def cmd_lint(args: argparse.Namespace) -> int:
    from ..core.json_output import json_text
    from ..core.model_folder.lint import lint_path

    findings = lint_path(args.path, stats=args.stats)
    if args.json:
        sys.stdout.write(json_text({"findings": [f.to_json() for f in findings]}) + "\n")
        return 1 if findings else 0
    folder = os.path.basename(os.path.abspath(args.path).rstrip(os.sep))
    if not findings:
        out(f"{printable(folder)}: no findings")
        return 0
    for f in findings:
        out(f"{f.severity.value:<7} {f.code}: {printable(f.message)}")
        shown = f.tensors[:5]
        if shown:
            more = f" and {len(f.tensors) - 5} more" if len(f.tensors) > 5 else ""
            out(f"        tensors: {printable(', '.join(shown))}{more}")
        if f.files:
            out(f"        files: {printable(', '.join(f.files))}")
    n = len(findings)
    out(f"{counted(n, 'finding')} in {printable(folder)}")
    return 1


def on_purpose_labels(tensors, target, globs) -> dict[str, str]:
    """Differing F32 tensors a model keeps in F32 on purpose (norms, inv_freq, routers)."""
    from ..core.model_folder.intended import is_intended

    if target.name == "F32":
        return {}
    return {t.name: "F32 on purpose?" for t in tensors if is_intended(t, globs)}
