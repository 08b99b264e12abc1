"""Bad input at the command line: exit 2 and exactly one stderr line naming the file and problem."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from inspector.cli.dispatch import main
from tests.malformed.make_corpus import BY_NAME, CASES

REJECTS = [c for c in CASES if c.expect == "reject"]
OKS = [c for c in CASES if c.expect == "ok"]
PREFIX = "checkpoint-inspector: error: "


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    base = tmp_path_factory.mktemp("cli-corpus")
    return {c.name: c.make(base / c.name) for c in CASES}


def one_error_line(err: str, path) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    line = lines[0]
    assert line.startswith(f"{PREFIX}{path}: "), line
    return line[len(f"{PREFIX}{path}: ") :]


@pytest.mark.parametrize("case", REJECTS, ids=lambda c: c.name)
def test_list_rejects_with_one_line(case, corpus, capsys):
    path = corpus[case.name]
    assert main(["list", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert re.search(case.says, one_error_line(err, path))


@pytest.mark.parametrize("name", ["torch_pickle_zip", "truncated_data", "text_file", "dup_field"])
def test_check_and_diff_reject_too(name, corpus, capsys):
    bad, good = corpus[name], corpus["good"]
    assert main(["check", str(bad)]) == 2
    one_error_line(capsys.readouterr().err, bad)
    assert main(["diff", str(good), str(bad)]) == 2
    one_error_line(capsys.readouterr().err, bad)
    assert main(["cast", str(bad), "--target", "F16", "-o", str(bad) + ".out"]) == 2
    one_error_line(capsys.readouterr().err, bad)


@pytest.mark.parametrize("case", OKS, ids=lambda c: c.name)
def test_odd_but_valid_files_list_with_stats(case, corpus, capsys):
    path = corpus[case.name]
    assert main(["list", str(path), "--stats", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert out.lstrip().startswith("{")


def test_pickle_named_in_the_error(corpus, capsys):
    path = corpus["torch_pickle_zip"]
    main(["list", str(path)])
    reason = one_error_line(capsys.readouterr().err, path)
    assert reason == (
        "pickle imports __builtin__.print, which is not part of a tensor checkpoint; nothing was "
        "executed (see: checkpoint-inspector scan)"
    )


@pytest.mark.parametrize(
    "name", ["torch_pickle_legacy", "folder_named_safetensors", "header_len_huge"]
)
def test_real_process_exit_code_and_stderr(name, corpus):
    """The installed entry point, not just main(): exit status 2, one line, no traceback."""
    path = corpus[name]
    r = subprocess.run(
        [sys.executable, "-m", "inspector", "list", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2
    assert r.stdout == ""
    assert re.search(BY_NAME[name].says, one_error_line(r.stderr, path))


@pytest.mark.parametrize("case", OKS, ids=lambda c: c.name)
def test_odd_but_valid_files_cast(case, corpus, tmp_path, capsys):
    """cast writes a file safe_open loads: same names, shapes and metadata, torch's F16 values."""
    import torch
    from safetensors import safe_open

    src, out = corpus[case.name], tmp_path / "out.safetensors"
    assert main(["cast", str(src), "--target", "F16", "-o", str(out)]) == 0
    assert "Traceback" not in capsys.readouterr().err
    with safe_open(str(src), "pt") as a, safe_open(str(out), "pt") as b:
        assert b.metadata() == a.metadata()
        assert sorted(b.keys()) == sorted(a.keys())
        for k in a.keys():  # noqa: SIM118 - safe_open is not iterable
            assert b.get_slice(k).get_shape() == a.get_slice(k).get_shape()
            try:
                x = a.get_tensor(k)
            except Exception:  # a valid shape torch cannot hold (65 dims, 2**64-1)
                continue
            want = x.to(torch.float16) if x.is_floating_point() else x
            assert torch.equal(b.get_tensor(k), want)
