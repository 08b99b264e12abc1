"""``quantize PATH --scheme S -o OUT`` writes a compressed-tensors model; ``quantize PATH
--preview [--scheme S]...`` says what each scheme would cost (size, error) and writes nothing."""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING

from ..core.wording import format_bytes
from .cmd_cast import _output_state
from .output import clip, counted, notices, out, printable, progress_printer
from .parser import UsageError
from .signals import StoppedAfterWriting, Terminated

if TYPE_CHECKING:
    from ..core.quantize.report import QuantizeReport
    from ..core.quantize.schemes import Scheme


def cmd_quantize(args: argparse.Namespace) -> int:
    from ..core.opening import open_checkpoint
    from ..core.quantize.schemes import SCHEMES
    from ..core.quantize.targets import DEFAULT_IGNORE

    schemes = _schemes(args.scheme) if args.scheme else []
    ignore = args.ignore if args.ignore else list(DEFAULT_IGNORE)
    if args.preview:
        if args.output:
            raise UsageError("--preview writes nothing; leave out -o")
        from ..core.cast.worker_boot import drop_early_workers, start_workers_early
        from ..core.cast.worker_policy import bytes_on_disk, processes_for

        start_workers_early(processes_for(bytes_on_disk(args.path)))  # they load while we do
        try:
            ckpt = open_checkpoint(args.path)
            notices(ckpt)
            return _preview(ckpt, schemes or list(SCHEMES.values()), ignore, args.json)
        finally:
            drop_early_workers()
    if len(schemes) != 1 or not args.output:
        raise UsageError("quantize writes one scheme: give --scheme S and -o OUT (or --preview)")
    if args.json:
        raise UsageError("--json goes with --preview; the saved report is --report R.json")
    ckpt = open_checkpoint(args.path)
    notices(ckpt)
    before = _output_state(args.output)
    try:
        return _write(ckpt, schemes[0], args, ignore)
    except (KeyboardInterrupt, Terminated) as e:
        if _output_state(args.output) == before:
            raise
        import signal

        signum = e.signum if isinstance(e, Terminated) else signal.SIGINT
        raise StoppedAfterWriting(signum, args.output) from None


def _schemes(names: list[str]) -> list[Scheme]:
    from ..core.quantize.schemes import SCHEMES, scheme_named

    found = []
    for name in names:
        s = scheme_named(name)
        if s is None:
            raise UsageError(f"unknown scheme {name!r}; one of {', '.join(SCHEMES)}")
        if s not in found:
            found.append(s)
    return found


def _write(ckpt, scheme: Scheme, args: argparse.Namespace, ignore: list[str]) -> int:  # type: ignore[no-untyped-def]
    from ..core.progress import run_job
    from ..core.quantize.job import quantize_checkpoint

    job = quantize_checkpoint(
        ckpt, scheme, args.output, ignore, report_path=args.report, measure=args.report is not None
    )
    report = run_job(job, progress_printer("quantize"))
    out(
        f"wrote {printable(args.output)}: {counted(len(report.weights), 'weight')} quantized with "
        f"{scheme.name} ({format_bytes(report.bytes_in)} → {format_bytes(report.bytes_out)})"
        + (f"; report in {printable(args.report)}" if args.report else "")
    )
    if report.measured:
        out("  " + _summary_line(report))
    for line in _skipped_lines(report):
        out(line)
    for note in report.notes:
        out(f"  note: {note}")
    return 0


def _preview(ckpt, schemes: list[Scheme], ignore: list[str], as_json: bool) -> int:  # type: ignore[no-untyped-def]
    from ..core.json_output import json_text
    from ..core.progress import run_job
    from ..core.quantize.preview import preview_checkpoint

    reports = run_job(preview_checkpoint(ckpt, schemes, ignore), progress_printer("preview"))
    if as_json:
        sys.stdout.write(json_text({"schemes": [r.to_json() for r in reports]}) + "\n")
        return 0
    width = max(len(r.scheme) for r in reports)
    for r in reports:
        out(f"{r.scheme:<{width}}  {_summary_line(r)}")
    for r in reports:
        if not r.weights:
            continue
        worst = ", ".join(f"{clip(printable(w.name), 60)} ({_db(w.sqnr_db)})" for w in r.worst())
        out(f"  {r.scheme} worst: {worst}")
    skipped = {s.name: s.why for r in reports for s in r.skipped}
    if skipped:
        out(f"  not quantized: {counted(len(skipped), 'Linear weight')}"
            f" ({', '.join(clip(printable(n), 40) for n in list(skipped)[:3])}"
            f"{', …' if len(skipped) > 3 else ''})")  # fmt: skip
    return 0


def _summary_line(r: QuantizeReport) -> str:
    ratio = r.bytes_out / r.bytes_in if r.bytes_in else 1.0
    if not r.weights:
        return f"{format_bytes(r.bytes_out)}, nothing to quantize"
    return (
        f"{format_bytes(r.bytes_out)} ({ratio:.0%} of {format_bytes(r.bytes_in)}), "
        f"{counted(len(r.weights), 'weight')}, SQNR median {_db(r.median_sqnr_db)}, "
        f"worst {_db(r.worst_sqnr_db)}"
    )


def _skipped_lines(r: QuantizeReport) -> list[str]:
    if not r.skipped:
        return []
    lines = [
        f"  {counted(len(r.skipped), 'Linear weight')} left as "
        f"{'they were' if len(r.skipped) != 1 else 'it was'}:"
    ]
    lines += [f"    {clip(printable(s.name))}: {s.why}" for s in r.skipped[:10]]
    if len(r.skipped) > 10:
        lines.append(f"    and {len(r.skipped) - 10} more")
    return lines


def _db(x: float | None) -> str:
    if x is None:
        return "n/a"
    return "lossless" if math.isinf(x) and x > 0 else f"{x:.1f} dB"
