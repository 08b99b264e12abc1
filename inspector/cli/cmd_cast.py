"""``checkpoint-inspector cast PATH --target DTYPE -o OUT``: a durable cast with its precision
report, each overflow, underflow and NaN count named with its worst tensors.

A large cast's worker processes are started before the cast modules load (they boot on the
idle core meanwhile) and stopped if the cast does not take them.
"""

from __future__ import annotations

import argparse
import os
import signal
import stat

from .model import FolderConfig, castable, intended_globs, resolve_target
from .output import clip, counted, notices, out, printable, progress_printer, symbol
from .signals import StoppedAfterWriting, Terminated


def cmd_cast(args: argparse.Namespace) -> int:
    from ..core.cast.worker_boot import drop_early_workers, start_workers_early
    from ..core.cast.worker_policy import bytes_on_disk, processes_for

    before = _output_state(args.output)
    start_workers_early(processes_for(bytes_on_disk(args.path)))  # they load while we do
    try:
        return _cast(args)
    except (KeyboardInterrupt, Terminated) as e:
        # all renamed into place before the signal (it waits for a commit that has begun)?
        if _output_state(args.output) == before:
            raise
        signum = e.signum if isinstance(e, Terminated) else signal.SIGINT
        raise StoppedAfterWriting(signum, args.output) from None
    finally:
        drop_early_workers()


def _output_state(path: str) -> object:
    """What is at ``path`` (a file's inode and mtime, or a folder's entries), to tell after a
    Ctrl-C whether the cast had replaced it: a stopped cast leaves it as it was."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return (st.st_ino, st.st_mtime_ns)
    try:
        with os.scandir(path) as entries:
            return sorted((e.name, e.inode()) for e in entries)
    except OSError:
        return ()


def _cast(args: argparse.Namespace) -> int:
    from ..core.cast.job import cast_checkpoint
    from ..core.opening import open_checkpoint
    from ..core.progress import run_job

    ckpt = open_checkpoint(args.path, keep_all=args.keep_all)
    notices(ckpt, training=False)  # said on stdout, with what was written
    folder = FolderConfig.of(args.path)
    target = castable(args.path, resolve_target(args, folder))
    presets = intended_globs(folder) if args.keep_preset else ()
    keep = [*args.keep, *presets]
    job = cast_checkpoint(
        ckpt, target, args.output, keep=keep, report=True, report_path=args.report
    )
    report = run_job(job, progress_printer("cast"))
    totals = report.totals()  # report.tensors: the tensors whose dtype the cast changed
    dequantized = [t for t in report.tensors if t.dequantized]
    if dequantized:  # a quantized model came out as a plain one
        schemes = ", ".join(sorted({t.dequantized or "" for t in dequantized}))
        what = (
            f"{counted(len(dequantized), 'quantized weight')} "
            f"dequantized to {target.name} ({schemes}), "
            f"{counted(totals['tensors_cast'] - len(dequantized), 'other tensor')} cast"
        )
    else:
        what = (
            f"{totals['tensors_cast']} of {counted(len(ckpt), 'tensor')} cast to {target.name}, "
            f"{totals['lossless']} of them lossless"
        )
    out(
        f"wrote {printable(args.output)}: {what}"
        + (f"; report in {printable(args.report)}" if args.report else "")
    )
    from ..core.burn_hint import written_burnpack_line
    from ..core.cast.outputs import is_one_burnpack

    if is_one_burnpack(args.output):
        src = ckpt.files[0]
        out(written_burnpack_line(args.output, src.format, src.metadata, target.name))
    if ckpt.training is not None:
        out(ckpt.training.line(len(ckpt)) + "; --keep-all writes everything")
    for line in [*_loss_lines(report), *_typical_lines(report)]:
        out(line)
    for line in _left_out_lines(report.left_out):
        out(line)
    return 0


def _left_out_lines(left_out: list[dict[str, str]]) -> list[str]:
    """Tensors torch loads that the output does not hold (complex128): named, never silent."""
    if not left_out:
        return []
    lines = [f"  {counted(len(left_out), 'tensor')} left out (not written):"]
    lines += [f"    {clip(printable(e['name']))}: {printable(e['why'])}" for e in left_out[:10]]
    if len(left_out) > 10:
        lines.append(f"    and {len(left_out) - 10} more")
    return lines


def _typical_lines(report) -> list[str]:
    """The typical relative error of the cast tensors beside the largest, and how many tensors
    owe a largest error of 1 to an underflow (a value that became 0), not to rounding."""
    rows = [r for r in report.tensors if r.mean_rel_err and r.max_rel_err is not None]
    if not rows:
        return []
    lo, hi = min(r.mean_rel_err for r in rows), max(r.mean_rel_err for r in rows)
    typical = f"{lo:.2g}" if f"{lo:.2g}" == f"{hi:.2g}" else f"{lo:.2g} to {hi:.2g}"
    line = (
        f"  relative error per tensor: typical (mean) {typical}, "
        f"largest {max(r.max_rel_err for r in rows):.3g}"
    )
    n_under = sum(1 for r in rows if r.max_rel_err == 1.0 and r.underflow)
    if n_under:
        line += f" (1 in {counted(n_under, 'tensor')}: a value became zero)"
    return [line]


def _loss_lines(report) -> list[str]:
    """What the cast changed beyond rounding: overflow, underflow, NaN, each with its worst tensors."""
    lines = []
    for key, one, many in (
        (
            "overflow",
            "value overflowed to ±inf or was saturated",
            "values overflowed to ±inf or were saturated",
        ),
        ("underflow", "non-zero value became zero", "non-zero values became zero"),
        ("nan", "NaN value (already in the source)", "NaN values (already in the source)"),
    ):
        counts = sorted(
            ((getattr(r, key) or 0, r.name) for r in report.tensors if getattr(r, key)),
            reverse=True,
        )
        if not counts:
            continue
        total = sum(n for n, _ in counts)
        what = one if total == 1 else many
        worst = ", ".join(f"{clip(printable(name))} ({n:,})" for n, name in counts[:3])
        more = f" and {counted(len(counts) - 3, 'more tensor')}" if len(counts) > 3 else ""
        lines.append(f"  {total:,} {symbol(what, what.replace('±', '+/-'))}: {worst}{more}")
    return lines
