"""What ``--help`` says, for the window and each command: every option with its metavar and
help text (whitespace as argparse wraps it aside), the window's forms, ``--version``; and the
window's own usage errors. The mutation run of inspector/cli/ (round 3) found the help texts
checked by a few words."""

from __future__ import annotations

import pytest

from inspector import __version__
from inspector.cli import main

PATH = (
    "a .safetensors file, a PyTorch pickle (.pt .pth .bin .ckpt), a burn .bpk, a .gguf, an "
    "*.index.json, or a folder"
)
TARGET = (
    "--target TARGET model dtype to compare against / cast to (F32, F16, BF16, float32, half, "
    "...), or 'config': the dtype of the folder's config.json. Default: config.json's dtype when "
    "the checkpoint has one, else F32"
)
KEEP_ALL = (
    "--keep-all a training checkpoint (Lightning, a training loop's model+optimizer, DDP) as it "
    "is: every tensor under its full name (default: the model's weights, named as the model "
    "expects)"
)
HELP = {
    "": [
        "usage: checkpoint-inspector [-h] [--target TARGET] [--screenshot OUT.png] "
        "[--reference PATH] [--lang {en,zh_CN}] [--version] [path]",
        "Open the checkpoint-inspector window. Subcommands: list, check, cast, quantize, diff, "
        "scan, lint (see 'checkpoint-inspector list --help').",
        f"path {PATH}",
        "--target TARGET model dtype; wins over config.json (default: config.json's dtype, else "
        "the last one chosen, else F32)",
        "--screenshot OUT.png render the window offscreen after loading, then exit",
        "--reference PATH a second checkpoint to compare against",
        "--lang {en,zh_CN} language of the window (default: the system locale); the command line "
        "is English",
        "Command line forms: "
        "checkpoint-inspector list PATH [--target DTYPE] [--json] [--stats] [--order natural|file] "
        "checkpoint-inspector check PATH [--target DTYPE] "
        "checkpoint-inspector cast PATH [--target DTYPE] -o OUT [--keep GLOB]... "
        "[--report REPORT.json] "
        "checkpoint-inspector quantize PATH --scheme S -o OUT [--ignore GLOB]... [--report R.json] "
        "checkpoint-inspector quantize PATH --preview [--scheme S]... [--json] "
        "checkpoint-inspector diff A B [--json] [--atol X] "
        "checkpoint-inspector scan PATH [--json] "
        f"checkpoint-inspector lint PATH [--json] [--stats] PATH: {PATH}",
    ],
    "list": [
        "usage: checkpoint-inspector list [-h] [--target TARGET] [--keep-all] [--json] [--stats] "
        "[--order {natural,file}] path",
        f"path {PATH}",
        TARGET,
        KEEP_ALL,
        "--json machine-readable output",
        "--stats add min/max/mean/std/nan/inf (reads all data)",
        "--order {natural,file} natural: differing tensors first, names with numbers as numbers "
        "(default); file: the order of the file",
    ],
    "check": [
        "usage: checkpoint-inspector check [-h] [--target TARGET] [--keep-all] path",
        f"path {PATH}",
        TARGET,
        KEEP_ALL,
    ],
    "cast": [
        "usage: checkpoint-inspector cast [-h] [--target TARGET] [--keep-all] -o OUTPUT "
        "[--keep GLOB] [--keep-preset {fp32-norms}] [--report REPORT.json] path",
        f"path {PATH}",
        TARGET,
        KEEP_ALL,
        "--output OUTPUT output file (a folder for sharded input)",
        "--keep GLOB leave tensors whose name matches GLOB in their own dtype (repeatable)",
        "--keep-preset {fp32-norms} fp32-norms: keep norms, rotary inv_freq and MoE routers (and "
        "the config's modules_to_not_convert) in their own dtype",
        "--report REPORT.json write per-tensor precision loss as JSON",
    ],
    "quantize": [
        "usage: checkpoint-inspector quantize [-h] [--scheme S] [-o OUTPUT] [--ignore GLOB] "
        "[--report R.json] [--preview] [--json] path",
        "Quantize Linear weights into a compressed-tensors model (llm-compressor's presets), byte "
        "for byte as llm-compressor's data-free run writes them, streamed; or --preview: each "
        "scheme's size and precision loss, nothing written.",
        f"path {PATH}",
        "--scheme S FP8_DYNAMIC, FP8_BLOCK, W8A16, W4A16, NVFP4A16, MXFP4A16 (repeatable with "
        "--preview; default there: all)",
        "--output OUTPUT output model folder",
        "--ignore GLOB leave Linear modules matching GLOB (or re:REGEX, or a name) as they are "
        "(repeatable; default: lm_head)",
        "--report R.json write the per-weight report as JSON",
        "--preview measure each scheme; write nothing",
        "--json machine-readable preview",
    ],
    "diff": [
        "usage: checkpoint-inspector diff [-h] [--json] [--atol ATOL] a b",
        "--atol ATOL absolute tolerance for 'equal' (default 0: bit-for-bit values)",
    ],
    "lint": [
        "usage: checkpoint-inspector lint [-h] [--json] [--stats] path",
        "Check a model folder's consistency (0: clean; 1: findings; 2: unreadable): index against "
        "shards, stray and missing shards, names, duplicated tensors, config.json's dtype against "
        "the weights, an interrupted save; --stats also reads every value for NaN/inf.",
        "path a model folder (or a file or index inside one)",
        "--json machine-readable output",
        "--stats also look for NaN/inf (reads all data)",
    ],
    "scan": [
        "usage: checkpoint-inspector scan [-h] [--json] path",
        "List what each pickle imports (0: only tensors; 1: other imports; 2: unreadable), judged "
        "as torch.load would read each file; nothing is executed. A folder is scanned "
        "recursively, every file.",
        "path a .pt/.bin/.ckpt pickle, a safetensors file, or a folder",
        "--json machine-readable output",
    ],
}


@pytest.mark.parametrize("command", list(HELP))
def test_help_says_every_option_with_its_text(capsys, command):
    with pytest.raises(SystemExit) as e:
        main([command, "--help"] if command else ["--help"])
    assert e.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for phrase in HELP[command]:
        assert phrase in text


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert (e.value.code, capsys.readouterr().out) == (0, f"checkpoint-inspector {__version__}\n")


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--screenshot", "{tmp}/o.png"], "--screenshot needs a PATH to load"),
        (["--target", "F12", "m.safetensors"], "argument --target: unknown dtype 'F12'"),
        (["a", "b"], "unrecognized arguments: b (see checkpoint-inspector --help)"),
        (
            ["diff", "a", "b", "--atol", "x"],
            "argument --atol: invalid number 'x' (see checkpoint-inspector diff --help)",
        ),
        (
            ["diff", "a", "b", "--atol", "-1"],
            "argument --atol: --atol must be a non-negative "
            "number (see checkpoint-inspector diff --help)",
        ),
        (
            ["cast", "m"],
            "the following arguments are required: -o/--output "
            "(see checkpoint-inspector cast --help)",
        ),
    ],
)
def test_usage_errors_are_one_line(tmp_path, capsys, argv, said):
    code = main([a.format(tmp=tmp_path) for a in argv])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    if argv[0] == "--target":  # then what parse_dtype says it accepts
        assert err.startswith(f"checkpoint-inspector: error: {said}") and err.count("\n") == 1
        assert err.endswith(" (see checkpoint-inspector --help)\n")
    else:
        assert err == f"checkpoint-inspector: error: {said}\n"


def test_an_atol_of_zero_is_bit_for_bit(tmp_path, capsys):
    import numpy as np

    from inspector.core.dtypes import DTYPES
    from inspector.core.save.writer import save_arrays

    p = tmp_path / "m.safetensors"
    save_arrays(p, [("w", DTYPES["F32"], np.ones(2, np.float32))])
    assert main(["diff", str(p), str(p), "--atol", "0"]) == 0
    assert capsys.readouterr().out == "equal: 1 equal\n"
