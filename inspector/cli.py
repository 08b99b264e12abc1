"""Command line front for the core; with no subcommand it opens the window.

Exit codes everywhere: 0 ok; 1 a check/diff found differences; 2 bad input or usage.
Errors are one line on stderr: ``checkpoint-inspector: error: <path>: <reason>``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterable, Iterator, Sequence

from .cli_cast import cmd_cast
from .cli_model import FolderConfig, cmd_lint, config_line, intended_globs, resolve_target
from .cli_output import (
    StdoutError,
    clip,
    make_streams_safe,
    notices,
    out,
    printable,
    progress_printer,
    stdout_errors_tagged,
    symbol,
)
from .cli_parser import PROG, UsageError, _build_gui_parser, _build_sub_parser
from .cli_scan import cmd_scan
from .cli_signals import (
    StoppedAfterWriting,
    Terminated,
    ignore_further_signals,
    install_signal_handlers,
)
from .core.errors import CheckpointError

SUBCOMMANDS = ("list", "check", "cast", "diff", "scan", "lint")
EXIT_OK, EXIT_DIFFERENT, EXIT_BAD_INPUT = 0, 1, 2


# -- commands -----------------------------------------------------------------------------


def _cmd_list(args: argparse.Namespace) -> int:
    from .core.checkpoint import open_checkpoint
    from .core.natural_order import natural_order
    from .core.progress import run_job
    from .core.stats import compute_stats
    from .core.summary import format_bytes, matches_target, summarize, tensor_status
    from .core.training_layout import training_left_out

    ckpt = open_checkpoint(args.path, keep_all=args.keep_all)
    notices(ckpt)
    folder = FolderConfig.of(args.path)  # config.json, read once
    target = resolve_target(args, folder)
    tensors = natural_order(ckpt.tensors, target) if args.order == "natural" else ckpt.tensors
    stats = run_job(compute_stats(ckpt), progress_printer("stats")) if args.stats else {}
    # one status per dtype, not per tensor (200k tensors: ~0.4 s less)
    samples = {t.dtype_name: t for t in tensors}
    status_of = {name: tensor_status(t, target) for name, t in samples.items()}
    if args.json:
        file_names = {h.path: os.path.basename(h.path) for h in ckpt.files}
        matches = {name: matches_target(t, target) for name, t in samples.items()}
        extra: dict[str, object] = {"target": target.name, "metadata": ckpt.metadata}
        if ckpt.training is not None:
            extra["training"] = training_left_out(ckpt)
        values = _pickle_values(ckpt)
        if values:
            extra["values"] = [{"name": v.name, "value": v.text} for v in values]
        _write_json_rows(_json_rows(tensors, file_names, matches, stats), extra)
        return EXIT_OK

    status_text = _status_words(target, short=args.stats)
    on_purpose = _on_purpose(ckpt.tensors, target, intended_globs(folder))
    names = _printable_names(tensors)
    shape_text: dict[tuple[int, ...], str] = {}  # tensors share a few shapes and sizes
    size_text: dict[int, str] = {}
    lines = []
    if args.stats:  # 120 columns: a long name gets a line of its own above its numbers
        name_w = 28
        lines.append(
            f"{'name':<{name_w}}  {'dtype':<8} {'shape':<15} {'status':<11}"
            f" {'min':>9} {'max':>9} {'mean':>9} {'std':>9} {'nan':>5} {'inf':>5}"
        )
        for t in tensors:
            s = stats[t.name]
            name = names[t.name]
            if len(name) > name_w:
                lines.append(name)
                name = ""
            numbers = " ".join(f"{_num(v):>9}" for v in (s.min, s.max, s.mean, s.std))
            shape = shape_text.get(t.shape) or shape_text.setdefault(t.shape, _shape(t.shape))
            lines.append(
                f"{name:<{name_w}}  {t.dtype_name:<8} {shape:<15} "
                f"{on_purpose.get(t.name) or status_text[status_of[t.dtype_name]]:<11} {numbers} "
                f"{s.nan:>5} {s.inf:>5}".rstrip()
            )
    else:
        name_w = min(max([4, *(len(n) for n in names.values())]), 60)
        lines.append(f"{'name':<{name_w}}  {'dtype':<8} {'shape':<20} {'size':>10}  status")
        for t in tensors:
            shape = shape_text.get(t.shape) or shape_text.setdefault(t.shape, _shape(t.shape))
            nbytes = t.nbytes
            size = size_text.get(nbytes) or size_text.setdefault(nbytes, format_bytes(nbytes))
            line = (
                f"{names[t.name]:<{name_w}}  {t.dtype_name:<8} {shape:<20} {size:>10}  "
                f"{on_purpose.get(t.name) or status_text[status_of[t.dtype_name]]}"
            )
            lines.append(line.rstrip())
    lines.append(summarize(ckpt.tensors, target).line().rstrip())
    lines.extend(line.rstrip() for line in _value_lines(ckpt))
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


def _printable_names(tensors) -> dict[str, str]:
    """name -> its printable form; one check of all names together when none needs escaping
    (the common case: 200k per-name checks were a tenth of a big listing)."""
    if printable(all_names := "".join(t.name for t in tensors)) == all_names:
        return {t.name: t.name for t in tensors}
    return {t.name: printable(t.name) for t in tensors}


def _json_rows(tensors, file_names, matches, stats) -> Iterator[dict[str, object]]:
    """The ``list --json`` rows, made while they are written (no list of 200k dicts)."""
    for t in tensors:
        start, end = t.data_offsets
        row: dict[str, object] = {
            "name": t.name,
            "dtype": t.dtype_name,
            "shape": t.shape,  # a tuple: written as the same JSON array
            "file": file_names[t.file],
            "nbytes": end - start,
            "matches_target": matches[t.dtype_name],
        }
        if stats:
            row.update(stats[t.name].to_json())
        yield row


def _on_purpose(tensors, target, globs) -> dict[str, str]:
    """Differing F32 tensors a model keeps in F32 on purpose (norms, inv_freq, routers)."""
    from .core.model_folder.intended import is_intended

    if target.name == "F32":
        return {}
    return {t.name: "F32 on purpose?" for t in tensors if is_intended(t, globs)}


def _pickle_values(ckpt) -> list:
    """A pickle's non-tensor leaves (epoch, hyper-parameters): listed, never written by cast."""
    return [v for h in ckpt.files if h.pickle is not None for v in h.pickle.values]


def _value_lines(ckpt) -> list[str]:
    values = _pickle_values(ckpt)
    if not values:
        return []
    lines = [f"{len(values)} value(s) that are not tensors (listed, not written by cast):"]
    lines += [f"  {printable(v.name) or '(top level)'} = {printable(v.text)}" for v in values]
    return lines


def _status_words(target, short: bool) -> dict:
    from .core.status import TensorStatus

    ne = symbol("≠", "!=")
    return {
        TensorStatus.MATCH: "",
        TensorStatus.DIFFERS: f"{ne} {target.name}",
        TensorStatus.KEPT: "not a float" if short else "kept (not a float)",  # as the window
    }


def _shape(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}"


def _write_json_rows(rows: Iterable[dict[str, object]], extra: dict[str, object]) -> None:
    from .core.json_output import rows_document

    sys.stdout.write(rows_document(rows, extra))


def _cmd_check(args: argparse.Namespace) -> int:
    from .core.checkpoint import open_checkpoint
    from .core.model_folder.intended import suggests_fp32_norms
    from .core.status import TensorStatus
    from .core.summary import summarize, tensor_status

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
    on_purpose = _on_purpose(differing, target, intended_globs(folder))
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


def _cmd_diff(args: argparse.Namespace) -> int:
    from .core.checkpoint import open_checkpoint
    from .core.diff import DiffSummary, diff_checkpoints
    from .core.progress import run_job
    from .core.status import DiffStatus

    a = open_checkpoint(args.a)
    b = open_checkpoint(args.b)
    notices(a)
    notices(b)
    diffs = run_job(diff_checkpoints(a, b, atol=args.atol), progress_printer("diff"))
    equal = all(d.is_equal for d in diffs)
    if args.json:
        _write_json_rows([d.to_json() for d in diffs], {"equal": equal})
    else:
        width = max([15, *(len(str(d.status)) for d in diffs)])
        for d in diffs:
            if d.status is DiffStatus.EQUAL:
                continue
            detail = ""
            if d.max_abs_diff is not None:
                detail = f"max abs {d.max_abs_diff:.3g}, max rel {d.max_rel_diff:.3g}"
            if d.dtype_a and d.dtype_b and d.dtype_a != d.dtype_b:
                detail += f" ({d.dtype_a} vs {d.dtype_b})"
            if d.status is DiffStatus.SHAPE_MISMATCH:
                detail += f" {list(d.shape_a or ())} vs {list(d.shape_b or ())}"
            out(f"{d.status!s:<{width}} {printable(d.name)}  {detail}".rstrip())
        summary = DiffSummary.of(diffs)
        verdict = "equal" if equal else "different"
        parts = ", ".join(f"{n} {s}" for s, n in summary.counts.items())
        tol = f" within atol {args.atol:g}" if args.atol else ""
        out(f"{verdict}{tol}: {parts}")
    return EXIT_OK if equal else EXIT_DIFFERENT


def _run_gui(args: argparse.Namespace) -> int:
    if args.screenshot and not args.path:
        raise UsageError("--screenshot needs a PATH to load")
    if not args.screenshot and _no_display():
        raise UsageError(
            "no display to open the window on (DISPLAY and WAYLAND_DISPLAY are unset); "
            f"use the subcommands ({PROG} list PATH) or render it to a file with "
            f"{PROG} --screenshot OUT.png PATH"
        )
    try:
        from .gui.app import run
    except ImportError as e:  # a core-only install, or Qt libraries missing on this machine
        raise UsageError(f"the window cannot start: {e}") from None
    target = args.target.name if args.target is not None else None
    return run(
        args.path,
        target=target,
        screenshot=args.screenshot,
        reference=args.reference,
        lang=args.lang,
    )


def _no_display() -> bool:
    """Linux/BSD without X11 or Wayland: Qt would abort with six lines and exit 134."""
    if sys.platform in ("win32", "darwin") or os.environ.get("QT_QPA_PLATFORM"):
        return False
    return not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


COMMANDS = {
    "list": _cmd_list,
    "check": _cmd_check,
    "cast": cmd_cast,
    "diff": _cmd_diff,
    "scan": cmd_scan,
    "lint": cmd_lint,
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if sys.stdout is None or sys.stderr is None:  # started with stdout/stderr closed (>&-)
        return _no_stream()
    make_streams_safe()
    try:
        if argv and argv[0] in SUBCOMMANDS:
            install_signal_handlers()
            args = _build_sub_parser().parse_args(argv)
            with stdout_errors_tagged():
                code = COMMANDS[args.command](args)
                sys.stdout.flush()  # a full disk or closed pipe is reported here, not at exit
            return code
        return _run_gui(_build_gui_parser().parse_args(argv))
    except UsageError as e:
        return _fail(str(e))
    except CheckpointError as e:
        return _fail(str(e))
    except KeyboardInterrupt:
        ignore_further_signals()
        return _fail("interrupted; nothing was written", code=130)
    except Terminated as e:
        import signal

        ignore_further_signals()
        return _fail(
            f"stopped by {signal.Signals(e.signum).name}; nothing was written", code=128 + e.signum
        )
    except StoppedAfterWriting as e:
        import signal

        ignore_further_signals()
        how = (
            "interrupted"
            if e.signum == signal.SIGINT
            else f"stopped by {signal.Signals(e.signum).name}"
        )
        return _fail(f"{how} after {e.path} was written; it is complete", code=128 + e.signum)
    except BrokenPipeError:
        # `checkpoint-inspector list big | head`: the reader left; that is not an error
        _silence_stdout()
        return EXIT_OK
    except MemoryError:
        return _fail("out of memory")
    except StdoutError as e:
        _silence_stdout()  # the flush at exit would fail again
        return _fail(f"standard output: cannot write: {e.strerror or e}")
    except OSError as e:  # not stdout's: say what the system said, and the file if it is known
        if e.filename:
            return _fail(f"{e.filename}: {e.strerror or e}")
        return _fail(e.strerror or str(e))


def _silence_stdout() -> None:
    with contextlib.suppress(OSError):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit


def _no_stream() -> int:
    with contextlib.suppress(OSError):
        os.write(2, f"{PROG}: error: standard output is closed; nothing to write to\n".encode())
    return EXIT_BAD_INPUT


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> int:
    """One line on stderr; names in it are escaped and clipped (a 1 MB name is not a 1 MB line)."""
    line = " ".join(printable(message).split())
    if len(line) > 400:
        line = clip(line, 400)
    sys.stderr.write(f"{PROG}: error: {line}\n")
    return code


def console_main() -> int:
    """The program's entry (installed command, ``python -m inspector``, bundles): unlike a
    library call of :func:`main`, its main module is safe for cast worker processes."""
    from .core.cast.worker_boot import single_threaded_blas

    single_threaded_blas()  # before anything imports numpy
    from .core.cast.worker_policy import allow_worker_processes

    allow_worker_processes()
    code = main()
    ignore_further_signals()  # done: a Ctrl-C now would only turn a finished run into a kill
    return code


def gui_main() -> int:
    """The gui-scripts entry: same as console_main (on Windows it starts without a console)."""
    return console_main()


if __name__ == "__main__":
    sys.exit(console_main())
