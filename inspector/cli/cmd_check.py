"""``check``: exit 1 and the fix command when float tensors differ from the target dtype."""

from __future__ import annotations

import argparse

from .exit_codes import EXIT_DIFFERENT, EXIT_OK
from .model import FolderConfig, config_line, intended_globs, on_purpose_labels, resolve_target
from .output import notices, out, printable
from .parser import PROG


def cmd_check(args: argparse.Namespace) -> int:
    from ..core.model_folder.intended import suggests_fp32_norms
    from ..core.opening import open_checkpoint
    from ..core.status import TensorStatus
    from ..core.summary import summarize, tensor_status

    ckpt = open_checkpoint(args.path, keep_all=args.keep_all)
    notices(ckpt)
    folder = FolderConfig.of(args.path)  # config.json, read once
    target = resolve_target(args, folder)
    quant = folder.quant(ckpt.tensors)
    stored = quant.part_of if quant is not None else {}  # codes and companions: not "differs"
    plain = [t for t in ckpt.tensors if t.name not in stored]
    differing = [t for t in plain if tensor_status(t, target) is TensorStatus.DIFFERS]
    summary = summarize(ckpt.tensors, target, quant)
    note = config_line(folder, plain, target)
    if not differing:
        out(
            f"ok: {_every_float(plain, quant is not None and bool(quant.weights), target.name)}"
            f" ({summary.line()})"
        )
        if quant is not None and quant.weights:
            out(_quant_line(quant))
        return EXIT_OK
    on_purpose = on_purpose_labels(differing, target, intended_globs(folder))
    for t in differing:
        why = (
            " — kept in F32 on purpose? (norm, inv_freq or router)" if t.name in on_purpose else ""
        )
        out(f"{printable(t.name)}: {t.dtype.name} (expected {target.name}){why}")
    out(summary.line())
    if note:
        out(note)
    keep = (
        " --keep-preset fp32-norms"
        if suggests_fp32_norms(differing, target.name, intended_globs(folder))
        else ""
    )
    refusal = quant.cast_refusal() if quant is not None else None
    if refusal is not None:  # never propose a cast that would write codes as values
        out(f"no fix by cast: {refusal}")
    else:
        out(f"fix: {PROG} cast {printable(args.path)} --target {target.name}{keep} -o OUT")
        if quant is not None and quant.weights:
            out(_quant_line(quant))
    return EXIT_DIFFERENT


def _every_float(plain: list, quantized: bool, target: str) -> str:
    """What ``ok`` says of the float tensors; a GGUF of quantized weights alone has none."""
    n_float = sum(1 for t in plain if t.dtype.is_float)
    if n_float == 0:
        return "no float tensor besides the quantized weights" if quantized else "no float tensor"
    if n_float == 1:
        return f"the 1 float tensor is {target}"
    return f"all {n_float} float tensors are {target}"


def _quant_line(quant) -> str:
    refusal = quant.cast_refusal()
    if refusal is None:
        them = "it" if len(quant.weights) == 1 else "them"
        what = (
            "writes safetensors under the HF names where the architecture is known"
            if quant.scheme_text.startswith("GGUF")
            else "writes a plain model, quantization_config removed"
        )
        return f"{quant.describe()}; a cast dequantizes {them} ({what})"
    return f"{quant.describe()}; a cast is refused: {refusal}"
