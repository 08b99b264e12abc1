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
    differing = [t for t in ckpt.tensors if tensor_status(t, target) is TensorStatus.DIFFERS]
    summary = summarize(ckpt.tensors, target)
    note = config_line(folder, ckpt.tensors, target)
    if not differing:
        n_float = sum(1 for t in ckpt.tensors if t.dtype.is_float)
        out(f"ok: all {n_float} float tensors are {target.name} ({summary.line()})")
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
    out(f"fix: {PROG} cast {printable(args.path)} --target {target.name}{keep} -o OUT")
    return EXIT_DIFFERENT
