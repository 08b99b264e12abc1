"""``diff``: two checkpoints tensor by tensor, matched by name; exit 1 when they differ."""

from __future__ import annotations

import argparse
import sys

from .exit_codes import EXIT_DIFFERENT, EXIT_OK
from .model import FolderConfig
from .output import notices, out, printable, progress_printer


def cmd_diff(args: argparse.Namespace) -> int:
    from ..core.diff import DiffSummary, diff_checkpoints, diff_document
    from ..core.diff_pairing import pairing
    from ..core.opening import open_checkpoint
    from ..core.progress import run_job
    from ..core.status import DiffStatus

    a = open_checkpoint(args.a)
    b = open_checkpoint(args.b)
    notices(a)
    notices(b)
    # a quantized side is compared by its dequantized values (one we cannot dequantize
    # exactly is compared as stored, tensor by tensor)
    quant_a, quant_b = (
        q if q is not None and q.cast_refusal() is None else None
        for q in (
            FolderConfig.of(args.a).quant(a.tensors),
            FolderConfig.of(args.b).quant(b.tensors),
        )
    )
    pair = pairing(a, b)
    if pair is not None and pair.a_is_burn is not None and not args.json:
        burn, torch = ("A", "B") if pair.a_is_burn else ("B", "A")
        out(
            f"{burn} has burn's names and layouts, {torch} PyTorch's: compared as "
            "PyTorchToBurnAdapter maps them (norms' gamma/beta as weight/bias, Linear weights "
            "transposed)"
        )
    elif pair is not None and not args.json:
        side = "A" if pair.gguf_a is not None else "B"
        out(
            f"{side} is GGUF: its tensors are compared under the HF names they were converted "
            "from, with the Q/K rows llama.cpp's converter interleaves (llama family) put back in order"
        )
    job = diff_checkpoints(a, b, atol=args.atol, quant_a=quant_a, quant_b=quant_b)
    diffs = run_job(job, progress_printer("diff"))
    equal = all(d.is_equal for d in diffs)
    if args.json:
        sys.stdout.write(diff_document(diffs))
    else:
        width = max([15, *(len(str(d.status)) for d in diffs)])
        for d in diffs:
            if d.status is DiffStatus.EQUAL:
                continue
            detail = ""
            if d.max_abs_diff is not None:
                detail = f"max abs {d.max_abs_diff:.3g}, max rel {d.max_rel_diff:.3g}"
            if d.quant is not None and d.rel_fro_err is not None:
                sqnr = f"{d.sqnr_db:.1f} dB" if d.sqnr_db is not None else "inf dB"
                detail += f", rel Frobenius {d.rel_fro_err:.3g}, SQNR {sqnr} ({d.quant})"
            elif d.dtype_a and d.dtype_b and d.dtype_a != d.dtype_b:
                detail += f" ({d.dtype_a} vs {d.dtype_b})"
            if d.status is DiffStatus.SHAPE_MISMATCH:
                detail += f" {list(d.shape_a or ())} vs {list(d.shape_b or ())}"
            if d.name_b is not None:
                detail += f" [B: {printable(d.name_b)}]"
            if d.transposed:
                detail += " [transposed]"
            # two spaces, then the detail: a part added to an empty detail starts with its space
            out(f"{d.status!s:<{width}} {printable(d.name)}  {detail.lstrip()}".rstrip())
        summary = DiffSummary.of(diffs)
        verdict = "equal" if equal else "different"
        parts = ", ".join(f"{n} {s}" for s, n in summary.counts.items())
        tol = f" within atol {args.atol:g}" if args.atol else ""
        out(f"{verdict}{tol}: {parts}")
    return EXIT_OK if equal else EXIT_DIFFERENT
