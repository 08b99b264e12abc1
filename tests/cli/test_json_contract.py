"""The JSON documents other tools parse, pinned key by key and value by value (DESIGN.md: stable
keys). Mutation testing found key names that no test read: a renamed key passed every test."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from inspector.cli.dispatch import main


def _run(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().out


def _files(tmp_path):
    a = {"w": np.array([1.0, 2.0, 70000.0, 1e-9], np.float32), "ids": np.arange(3, dtype=np.int64)}
    b = {"w": np.array([1.0, 2.5, 70000.0, 1e-9], np.float64), "ids": np.arange(3, dtype=np.int64)}
    save_file(a, str(tmp_path / "a.safetensors"), metadata={"k": "v"})
    save_file(b, str(tmp_path / "b.safetensors"))
    return tmp_path / "a.safetensors", tmp_path / "b.safetensors"


def test_diff_json_rows(tmp_path, capsys):
    a, b = _files(tmp_path)
    code, out = _run(capsys, "diff", a, b, "--json")
    rows = {r["name"]: r for r in json.loads(out)["tensors"]}
    assert code == 1
    # the typical error beside the max (DESIGN): the RMS of the relative error over every element
    assert rows["w"].pop("rms_rel_err") == pytest.approx((0.2**2 / 4) ** 0.5, rel=1e-6)
    assert rows["w"] == {
        "name": "w",
        "status": "differ",
        "max_abs_diff": 0.5,
        "max_rel_diff": 0.2,
        "dtype_a": "F32",
        "dtype_b": "F64",
        "shape_a": [4],
        "shape_b": [4],
    }
    assert rows["ids"]["status"] == "equal" and rows["ids"]["max_abs_diff"] == 0
    assert rows["ids"]["rms_rel_err"] == 0


def test_diff_json_ends_with_the_verdict(tmp_path, capsys):
    """``equal``, after the rows, is the exit code's verdict: false when a tensor differs, true
    for a file against itself (mutation testing: the key renamed passed every test)."""
    a, b = _files(tmp_path)
    code, out = _run(capsys, "diff", a, b, "--json")
    doc = json.loads(out)
    assert (code, list(doc), doc["equal"]) == (1, ["tensors", "equal"], False)
    code, out = _run(capsys, "diff", a, a, "--json")
    assert (code, json.loads(out)["equal"]) == (0, True)


def test_cast_report_and_totals(tmp_path, capsys):
    a, _ = _files(tmp_path)
    report = tmp_path / "r.json"
    code, _ = _run(
        capsys, "cast", a, "--target", "F16", "-o", tmp_path / "o.safetensors", "--report", report
    )
    doc = json.loads(report.read_text())
    assert code == 0 and doc["target"] == "F16"
    assert doc["totals"] == {
        "tensors_cast": 1,
        "lossless": 0,
        "overflow": 1,
        "underflow": 1,
        "nan": 0,
    }
    (row,) = doc["tensors"]
    assert set(row) == {
        "name", "from", "to", "max_abs_err", "mean_abs_err", "max_rel_err", "mean_rel_err",
        "rms_rel_err", "overflow", "underflow", "nan", "lossless",
    }  # fmt: skip
    assert (row["name"], row["from"], row["to"], row["overflow"], row["underflow"]) == (
        "w", "F32", "F16", 1, 1,
    )  # fmt: skip
    tiny = float(np.float32(1e-9))  # became 0; 70000 overflowed (left out of the errors)
    assert row["lossless"] is False
    assert (row["max_abs_err"], row["max_rel_err"]) == (tiny, 1.0)
    assert row["mean_abs_err"] == tiny / 3
    # 1 and 2 are exact; the underflow is its own count
    assert row["mean_rel_err"] == row["rms_rel_err"] == 0.0


def test_list_json_rows_and_document(tmp_path, capsys):
    a, _ = _files(tmp_path)
    code, out = _run(capsys, "list", a, "--json", "--target", "F16", "--order", "file")
    doc = json.loads(out)
    assert code == 0 and doc["target"] == "F16" and doc["metadata"] == {"k": "v"}
    assert doc["tensors"] == [
        {"name": "ids", "dtype": "I64", "shape": [3], "file": "a.safetensors", "nbytes": 24,
         "matches_target": None},
        {"name": "w", "dtype": "F32", "shape": [4], "file": "a.safetensors", "nbytes": 16,
         "matches_target": False},
    ]  # fmt: skip
