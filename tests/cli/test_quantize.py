"""``quantize`` on the command line: the preview's table and JSON, a save's lines and report,
and every refusal as one line with exit 2 (nothing written)."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from inspector.cli import main
from inspector.core.wording import format_bytes
from tests.core.quantize.models import llama_folder


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _digest(folder) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_preview_prints_a_line_per_scheme_and_writes_nothing(tmp_path, capsys):
    src = llama_folder(tmp_path / "m")
    before = _digest(src)
    code, out, err = run(capsys, "quantize", src, "--preview")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[:6]] == [
        "FP8_DYNAMIC", "FP8_BLOCK", "W8A16", "W4A16", "NVFP4A16", "MXFP4A16",
    ]  # fmt: skip
    assert "7 weights, SQNR median" in lines[3] and "of 1.0 MiB" in lines[3]
    assert lines[-1] == "  not quantized: 1 Linear weight (lm_head.weight)"
    assert _digest(src) == before and sorted(os.listdir(tmp_path)) == ["m"]


def test_preview_json_has_each_scheme_with_its_tensors(tmp_path, capsys):
    src = llama_folder(tmp_path / "m")
    code, out, _ = run(capsys, "quantize", src, "--preview", "--scheme", "w4a16",
                       "--scheme", "fp8-block", "--json")  # fmt: skip
    assert code == 0
    doc = json.loads(out)
    assert [s["scheme"] for s in doc["schemes"]] == ["W4A16", "FP8_BLOCK"]
    w4 = doc["schemes"][0]
    assert w4["weights_quantized"] == 7 and w4["skipped"] == [
        {"name": "lm_head.weight", "why": "matches --ignore"}
    ]
    t = w4["tensors"][0]
    assert set(t) == {"name", "shape", "from", "bytes_in", "bytes_out", "max_abs_err",
                      "max_rel_err", "rms_rel_err", "rel_fro_err", "sqnr_db"}  # fmt: skip
    assert 15 < t["sqnr_db"] < 30 and t["bytes_out"] < t["bytes_in"] / 3


def test_a_save_says_what_it_wrote_and_its_report_matches(tmp_path, capsys):
    src = llama_folder(tmp_path / "m")
    code, out, err = run(capsys, "quantize", src, "--scheme", "NVFP4A16", "-o", tmp_path / "q",
                         "--report", tmp_path / "r.json")  # fmt: skip
    assert code == 0 and err == ""
    assert out.splitlines()[0].startswith(
        f"wrote {tmp_path / 'q'}: 7 weights quantized with NVFP4A16"
    )
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["scheme"] == "NVFP4A16" and len(report["tensors"]) == 7
    # a report asks for the figures: measured while writing, summed up on the second line
    assert all(t["sqnr_db"] > 0 for t in report["tensors"])
    assert out.splitlines()[1] == (
        f"  {format_bytes(report['bytes_out'])} ("
        f"{report['bytes_out'] / report['bytes_in']:.0%} of {format_bytes(report['bytes_in'])}), "
        f"7 weights, SQNR median {report['median_sqnr_db']:.1f} dB, worst "
        f"{report['worst_sqnr_db']:.1f} dB"
    )
    code, out, _ = run(capsys, "list", tmp_path / "q", "--json")
    rows = {r["name"]: r for r in json.loads(out)["tensors"]}
    assert rows["model.layers.0.mlp.up_proj.weight"]["status"] == "quantized"


def test_a_save_without_a_report_says_what_it_wrote_in_one_line(tmp_path, capsys):
    src = llama_folder(tmp_path / "m")
    code, out, err = run(capsys, "quantize", src, "--scheme", "FP8_BLOCK", "-o", tmp_path / "q")
    assert code == 0 and err == ""
    assert out.splitlines()[0] == (
        f"wrote {tmp_path / 'q'}: 7 weights quantized with FP8_BLOCK (1.0 MiB → 545.1 KiB)"
    )
    assert "SQNR" not in out  # not measured: the preview and --report give the figures


def test_a_report_never_replaces_a_file_of_the_source(tmp_path, capsys):
    """--report m/config.json overwrote the source's config with exit 0, in cast too (found by
    the hostile review): every file a save reads is protected."""
    src = llama_folder(tmp_path / "m")
    before = _digest(src)
    for argv in (
        ("quantize", src, "--scheme", "W4A16", "-o", tmp_path / "q"),
        ("cast", src, "--target", "F16", "-o", tmp_path / "c"),
    ):
        for victim in ("config.json", "tokenizer.json"):
            code, out, err = run(capsys, *argv, "--report", src / victim)
            assert code == 2 and len(err.splitlines()) == 1, err
            assert "is an input file of this save; the report must not replace it" in err
    assert _digest(src) == before and sorted(os.listdir(tmp_path)) == ["m"]


def test_refusals_are_one_line_and_exit_2(tmp_path, capsys):
    src = llama_folder(tmp_path / "m")
    cases = [
        (("--scheme", "int3", "-o", tmp_path / "o"), "unknown scheme 'int3'; one of FP8_DYNAMIC"),
        (("--scheme", "W4A16"), "quantize writes one scheme: give --scheme S and -o OUT"),
        (("--preview", "-o", tmp_path / "o"), "--preview writes nothing; leave out -o"),
        (("--scheme", "W4A16", "-o", tmp_path / "o", "--json"), "--json goes with --preview"),
        (("--scheme", "W4A16", "-o", tmp_path / "o.bpk"), "a quantized model is a folder"),
    ]
    for args, message in cases:
        code, out, err = run(capsys, "quantize", src, *args)
        assert code == 2 and out == "", args
        assert len(err.splitlines()) == 1 and message in err, err
    assert sorted(os.listdir(tmp_path)) == ["m"]


def test_help_lists_quantize_and_its_schemes(capsys):
    with pytest.raises(SystemExit):
        main(["quantize", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "FP8_DYNAMIC, FP8_BLOCK, W8A16, W4A16, NVFP4A16, MXFP4A16" in out and "--preview" in out
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "quantize PATH --preview" in capsys.readouterr().out


def test_a_report_beside_a_single_file_can_be_written_again(tmp_path, capsys):
    """Only the config, and the companions a save copies, are protected: a report written beside
    a lone file by an earlier run is not an input of the next."""
    from inspector.core.save.writer import save_arrays
    from tests.core.quantize.models import llama_tensors

    save_arrays(tmp_path / "w.safetensors", llama_tensors())
    for _ in range(2):
        code, _out, err = run(capsys, "cast", tmp_path / "w.safetensors", "--target", "F16",
                              "-o", tmp_path / "w16.safetensors", "--report", tmp_path / "r.json")  # fmt: skip
        assert code == 0, err


def test_preview_in_worker_processes_prints_what_threads_print(tmp_path, capsys, monkeypatch):
    """A large model's preview runs in worker processes (forced here by the environment): the
    same JSON to the last digit, and no process left behind."""
    import multiprocessing

    from inspector.core.cast.worker_policy import PROCESSES_ENV

    src = llama_folder(tmp_path / "m", layers=2)
    monkeypatch.setenv(PROCESSES_ENV, "0")
    code, threads, _ = run(capsys, "quantize", src, "--preview", "--json")
    monkeypatch.setenv(PROCESSES_ENV, "2")
    code2, processes, err = run(capsys, "quantize", src, "--preview", "--json")
    assert (code, code2, err) == (0, 0, "")
    assert processes == threads and len(json.loads(processes)["schemes"]) == 6
    assert multiprocessing.active_children() == []
