"""Command line front for the core; with no subcommand it opens the window.

Exit codes everywhere: 0 ok; 1 a check/diff found differences; 2 bad input or usage.
Errors are one line on stderr: ``checkpoint-inspector: error: <path>: <reason>``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

from ..core.errors import CheckpointError
from ..core.platform.facilities import check_switches
from .cmd_cast import cmd_cast
from .cmd_check import cmd_check
from .cmd_diff import cmd_diff
from .cmd_list import cmd_list
from .cmd_quantize import cmd_quantize
from .cmd_scan import cmd_scan
from .exit_codes import EXIT_BAD_INPUT, EXIT_OK
from .model import cmd_lint
from .output import (
    StdoutError,
    clip,
    make_streams_safe,
    printable,
    stdout_errors_tagged,
)
from .parser import PROG, UsageError, _build_gui_parser, _build_sub_parser
from .signals import (
    StoppedAfterWriting,
    Terminated,
    handlers_given_back,
    ignore_further_signals,
    install_signal_handlers,
)

SUBCOMMANDS = ("list", "check", "cast", "quantize", "diff", "scan", "lint")


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
        from ..gui.app import run
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
    "list": cmd_list,
    "check": cmd_check,
    "cast": cmd_cast,
    "quantize": cmd_quantize,
    "diff": cmd_diff,
    "scan": cmd_scan,
    "lint": cmd_lint,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line in this program: the signal handlers it sets while the command runs
    (and ignores while a stopped one ends) are the program's own again when it returns."""
    with handlers_given_back():
        return _main(argv)


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if sys.stdout is None or sys.stderr is None:  # started with stdout/stderr closed (>&-)
        return _no_stream()
    make_streams_safe()
    try:
        check_switches()  # CHECKPOINT_INSPECTOR_WITHOUT: a typo is refused, not ignored
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
    from ..core.cast.worker_boot import single_threaded_blas

    single_threaded_blas()  # before anything imports numpy
    from ..core.cast.worker_policy import allow_worker_processes

    allow_worker_processes()
    code = _main()  # not main(): the program ends here, its signals stay ignored
    ignore_further_signals()  # done: a Ctrl-C now would only turn a finished run into a kill
    return code


def gui_main() -> int:
    """The gui-scripts entry: same as console_main (on Windows it starts without a console)."""
    return console_main()


if __name__ == "__main__":
    sys.exit(console_main())
