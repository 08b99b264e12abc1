"""File ▸ Export: the table as CSV or as ``list --json`` writes it, and the comparison or cast
report as the CLI writes them, byte for byte."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from inspector.cli import main


def _cli(capsys, *argv) -> str:
    main([str(a) for a in argv])
    return capsys.readouterr().out


def test_the_table_exports_as_list_json_and_as_csv(loaded, model_file: Path, tmp_path, capsys):
    window = loaded
    assert window.window_actions.export_table.isEnabled()
    assert not window.window_actions.export_report.isEnabled()  # nothing cast or compared yet
    assert window.export_table(str(tmp_path / "t.json"))
    want = _cli(capsys, "list", model_file, "--json", "--target", window.target.name)
    assert (tmp_path / "t.json").read_text() == want
    assert window.export_table(str(tmp_path / "t.csv"))
    rows = list(csv.DictReader((tmp_path / "t.csv").open()))
    listed = json.loads(want)["tensors"]
    assert [r["name"] for r in rows] == [t["name"] for t in listed]
    f64 = next(r for r in rows if r["name"] == "encoder.layer.1.attention.self.query.weight")
    assert (f64["dtype"], f64["shape"], f64["status"], f64["params"]) == (
        "F64",
        "16x16",
        "differs",
        "256",
    )
    assert "Wrote t.csv." in window.message_bar.text


def test_the_comparison_exports_as_diff_json(qtbot, loaded, model_file, f32_file, tmp_path, capsys):
    window = loaded
    with qtbot.waitSignal(window.diff_done, timeout=20_000):
        window.open_reference(str(f32_file))
    assert window.window_actions.export_report.isEnabled()
    assert window.export_report(str(tmp_path / "diff.json"))
    want = _cli(capsys, "diff", model_file, f32_file, "--json")
    assert (tmp_path / "diff.json").read_text() == want


def test_the_cast_report_exports_as_cast_report_writes_it(qtbot, loaded, tmp_path):
    window = loaded
    with qtbot.waitSignal(window.cast_done, timeout=30_000):
        window.start_cast(str(tmp_path / "out.safetensors"))
    assert window.export_report(str(tmp_path / "report.json"))
    doc = json.loads((tmp_path / "report.json").read_text())
    assert doc == json.loads(window.cast_report.to_json_text())
    assert doc["target"] == window.target.name and doc["totals"]["tensors_cast"] > 0


def test_an_export_that_cannot_be_written_says_why_and_keeps_the_window(loaded, tmp_path):
    window = loaded
    assert not window.export_table(str(tmp_path / "missing" / "t.csv"))
    assert window.message_bar.kind == "error" and "Could not export" in window.message_bar.text
    assert window.ckpt is not None
