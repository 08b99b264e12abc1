"""The command line's grammar: subcommand parsers and the window's parser (argparse, with usage
errors as one line and exit 2 like every other bad input)."""

from __future__ import annotations

import argparse
from typing import NoReturn

PROG = "checkpoint-inspector"


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line and exit 2 like every other bad input."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def _dtype_arg(text: str):
    from ..core.dtypes import parse_dtype

    try:
        return parse_dtype(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _model_dtype_arg(text: str):
    """A dtype, or ``config``: the dtype the folder's config.json names (resolved after open)."""
    return "config" if text.strip().lower() == "config" else _dtype_arg(text)


def _cast_target_arg(text: str):
    """A dtype cast can write, or ``config`` (resolved, and checked castable, after open)."""
    from ..core.dtypes import parse_cast_target

    if text.strip().lower() == "config":
        return "config"

    try:
        return parse_cast_target(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _atol_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError("--atol must be a non-negative number")
    return value


KEEP_ALL_HELP = (
    "a training checkpoint (Lightning, a training loop's model+optimizer, DDP) as it is: every "
    "tensor under its full name (default: the model's weights, named as the model expects)"
)
PATH_HELP = (
    "a .safetensors file, a PyTorch pickle (.pt .pth .bin .ckpt), a burn .bpk, a .gguf, an "
    "*.index.json, or a folder"
)


def _build_sub_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="Inspect, check, cast, quantize, compare and scan checkpoints.",
    )
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    target_help = (
        "model dtype to compare against / cast to (F32, F16, BF16, float32, half, ...), or "
        "'config': the dtype of the folder's config.json. Default: config.json's dtype when the "
        "checkpoint has one, else F32"
    )

    p_list = sub.add_parser("list", help="list tensors with dtype, shape and size")
    p_list.add_argument("path", help=PATH_HELP)
    p_list.add_argument("--target", type=_model_dtype_arg, default=None, help=target_help)
    p_list.add_argument("--keep-all", action="store_true", help=KEEP_ALL_HELP)
    p_list.add_argument("--json", action="store_true", help="machine-readable output")
    p_list.add_argument(
        "--stats", action="store_true", help="add min/max/mean/std/nan/inf (reads all data)"
    )
    p_list.add_argument(
        "--order",
        choices=("natural", "file"),
        default="natural",
        help="natural: differing tensors first, names with numbers as numbers (default); "
        "file: the order of the file",
    )

    p_check = sub.add_parser(
        "check", help="exit 0 if every float tensor is the target dtype, else 1"
    )
    p_check.add_argument("path", help=PATH_HELP)
    p_check.add_argument("--target", type=_model_dtype_arg, default=None, help=target_help)
    p_check.add_argument("--keep-all", action="store_true", help=KEEP_ALL_HELP)

    p_cast = sub.add_parser("cast", help="write a copy with float tensors cast to the target dtype")
    p_cast.add_argument("path", help=PATH_HELP)
    p_cast.add_argument("--target", type=_cast_target_arg, default=None, help=target_help)
    p_cast.add_argument("--keep-all", action="store_true", help=KEEP_ALL_HELP)
    p_cast.add_argument(
        "-o", "--output", required=True, help="output file (a folder for sharded input)"
    )
    p_cast.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave tensors whose name matches GLOB in their own dtype (repeatable)",
    )
    p_cast.add_argument(
        "--keep-preset",
        choices=("fp32-norms",),
        action="append",
        default=[],
        help="fp32-norms: keep norms, rotary inv_freq and MoE routers (and the config's "
        "modules_to_not_convert) in their own dtype",
    )
    p_cast.add_argument(
        "--report", metavar="REPORT.json", help="write per-tensor precision loss as JSON"
    )

    _add_quantize(sub)

    p_diff = sub.add_parser("diff", help="compare two checkpoints tensor by tensor")
    p_diff.add_argument("a")
    p_diff.add_argument("b")
    p_diff.add_argument("--json", action="store_true")
    p_diff.add_argument(
        "--atol",
        type=_atol_arg,
        default=0.0,
        help="absolute tolerance for 'equal' (default 0: bit-for-bit values)",
    )
    lint_help = "check a model folder's consistency (0: clean; 1: findings; 2: unreadable)"
    p_lint = sub.add_parser(
        "lint",
        help=lint_help,
        description=f"{lint_help[0].upper()}{lint_help[1:]}: index against shards, stray and "
        "missing shards, names, duplicated tensors, config.json's dtype against the weights, "
        "an interrupted save; --stats also reads every value for NaN/inf.",
    )
    p_lint.add_argument("path", help="a model folder (or a file or index inside one)")
    p_lint.add_argument("--json", action="store_true", help="machine-readable output")
    p_lint.add_argument(
        "--stats", action="store_true", help="also look for NaN/inf (reads all data)"
    )

    scan_help = "list what each pickle imports (0: only tensors; 1: other imports; 2: unreadable)"
    p_scan = sub.add_parser(
        "scan",
        help=scan_help,
        description=f"{scan_help[0].upper()}{scan_help[1:]}, judged as torch.load would read "
        "each file; nothing is executed. A folder is scanned recursively, every file.",
    )
    p_scan.add_argument("path", help="a .pt/.bin/.ckpt pickle, a safetensors file, or a folder")
    p_scan.add_argument("--json", action="store_true", help="machine-readable output")
    return p


QUANTIZE_SCHEMES = "FP8_DYNAMIC, FP8_BLOCK, W8A16, W4A16, NVFP4A16, MXFP4A16"


def _add_quantize(sub: argparse._SubParsersAction) -> None:
    helptext = "quantize Linear weights into a compressed-tensors model (llm-compressor's presets)"
    p = sub.add_parser(
        "quantize",
        help=helptext,
        description=f"{helptext[0].upper()}{helptext[1:]}, byte for byte as llm-compressor's "
        "data-free run writes them, streamed; or --preview: each scheme's size and precision "
        "loss, nothing written.",
    )
    p.add_argument("path", help=PATH_HELP)
    p.add_argument(
        "--scheme",
        action="append",
        default=[],
        metavar="S",
        help=f"{QUANTIZE_SCHEMES} (repeatable with --preview; default there: all)",
    )
    p.add_argument("-o", "--output", help="output model folder")
    p.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave Linear modules matching GLOB (or re:REGEX, or a name) as they are "
        "(repeatable; default: lm_head)",
    )
    p.add_argument("--report", metavar="R.json", help="write the per-weight report as JSON")
    p.add_argument("--preview", action="store_true", help="measure each scheme; write nothing")
    p.add_argument("--json", action="store_true", help="machine-readable preview")


def _build_gui_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="Open the checkpoint-inspector window. Subcommands: list, check, cast, "
        f"quantize, diff, scan, lint (see '{PROG} list --help').",
        epilog=f"Command line forms:\n  {PROG} list PATH [--target DTYPE] [--json] [--stats] [--order natural|file]\n"
        f"  {PROG} check PATH [--target DTYPE]\n"
        f"  {PROG} cast PATH [--target DTYPE] -o OUT [--keep GLOB]... [--report REPORT.json]\n"
        f"  {PROG} quantize PATH --scheme S -o OUT [--ignore GLOB]... [--report R.json]\n"
        f"  {PROG} quantize PATH --preview [--scheme S]... [--json]\n"
        f"  {PROG} diff A B [--json] [--atol X]\n"
        f"  {PROG} scan PATH [--json]\n"
        f"  {PROG} lint PATH [--json] [--stats]\n"
        f"PATH: {PATH_HELP}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", nargs="?", help=PATH_HELP)
    p.add_argument(
        "--target",
        type=_dtype_arg,
        default=None,
        help="model dtype; wins over config.json (default: config.json's dtype, else the last "
        "one chosen, else F32)",
    )
    p.add_argument(
        "--screenshot",
        metavar="OUT.png",
        help="render the window offscreen after loading, then exit",
    )
    p.add_argument("--reference", metavar="PATH", help="a second checkpoint to compare against")
    p.add_argument(
        "--lang",
        choices=("en", "zh_CN"),
        default=None,
        help="language of the window (default: the system locale); the command line is English",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    return p


def _version() -> str:
    from .. import __version__

    return __version__
