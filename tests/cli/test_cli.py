"""Every CLI form in DESIGN.md on real files: output, JSON keys, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from inspector.cli.dispatch import main


@pytest.fixture
def model(tmp_path):
    """A model saved the way the trap happens: mostly F32, numpy-made F64, a BF16 head, int64 ids."""
    g = torch.Generator().manual_seed(0)
    sd = {
        "emb.weight": torch.randn(20, 8, generator=g),
        "layer.0.weight": torch.randn(8, 8, generator=g).double(),
        "layer.0.bias": torch.zeros(8, dtype=torch.float64),
        "head.weight": torch.randn(3, 8, generator=g).to(torch.bfloat16),
        "position_ids": torch.arange(20),
    }
    path = tmp_path / "model.safetensors"
    save_file(sd, path, metadata={"format": "pt"})
    return path, sd


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_text_marks_differing_and_kept(model, capsys):
    path, _ = model
    code, out, err = run(capsys, "list", path)
    assert code == 0 and err == ""
    lines = {line.split()[0]: line for line in out.splitlines()[1:-1]}
    assert "≠ F32" in lines["layer.0.weight"]
    assert "kept (not a float)" in lines["position_ids"]
    assert "≠" not in lines["emb.weight"]
    assert out.splitlines()[-1].startswith("3 of 5 tensors differ from F32 · ")
    assert out.splitlines()[-1].endswith("F64×2 BF16×1 I64×1")


def test_list_json_keys_and_target_alias(model, capsys):
    path, sd = model
    code, out, _ = run(capsys, "list", path, "--json", "--target", "bfloat16")
    assert code == 0
    doc = json.loads(out)
    assert doc["metadata"] == {"format": "pt"}
    rows = {r["name"]: r for r in doc["tensors"]}
    assert set(rows) == set(sd)
    head = rows["head.weight"]
    assert set(head) >= {"name", "dtype", "shape", "file", "nbytes", "matches_target"}
    assert (head["dtype"], head["shape"], head["file"], head["nbytes"]) == (
        "BF16",
        [3, 8],
        "model.safetensors",
        48,
    )
    assert head["matches_target"] is True
    assert rows["emb.weight"]["matches_target"] is False
    assert rows["position_ids"]["matches_target"] is None


def test_list_json_stats(model, capsys):
    path, sd = model
    code, out, _ = run(capsys, "list", path, "--json", "--stats")
    rows = {r["name"]: r for r in json.loads(out)["tensors"]}
    w = sd["layer.0.weight"]
    r = rows["layer.0.weight"]
    assert (r["min"], r["max"], r["nan"], r["inf"]) == (w.min().item(), w.max().item(), 0, 0)
    assert r["mean"] == pytest.approx(w.mean().item(), rel=1e-12)
    assert r["std"] == pytest.approx(w.std(unbiased=False).item(), rel=1e-12)


def test_list_sharded_folder_names_each_file(tmp_path, capsys):
    from huggingface_hub import save_torch_state_dict

    sd = {f"l{i}": torch.zeros(32, 32) for i in range(4)}
    save_torch_state_dict(sd, tmp_path, max_shard_size="5KB")
    code, out, _ = run(capsys, "list", tmp_path, "--json")
    files = {r["name"]: r["file"] for r in json.loads(out)["tensors"]}
    assert code == 0 and len(set(files.values())) > 1
    assert all(f.startswith("model-") and f.endswith(".safetensors") for f in files.values())


def test_check_exit_codes(model, tmp_path, capsys):
    path, sd = model
    code, out, _ = run(capsys, "check", path)
    assert code == 1
    assert "layer.0.weight: F64 (expected F32)" in out and "head.weight: BF16 (expected F32)" in out
    ok = tmp_path / "ok.safetensors"
    save_file({"w": torch.zeros(2), "ids": torch.arange(3)}, ok)
    assert run(capsys, "check", ok)[0] == 0
    assert run(capsys, "check", ok, "--target", "F16")[0] == 1


def test_cast_then_check_passes_and_keeps_ints(model, tmp_path, capsys):
    path, sd = model
    out_path = tmp_path / "model.f32.safetensors"
    report = tmp_path / "report.json"
    code, out, err = run(
        capsys, "cast", path, "--target", "float32", "-o", out_path, "--report", report
    )
    assert code == 0, err
    assert run(capsys, "check", out_path)[0] == 0
    loaded = load_file(out_path)
    for name, value in sd.items():
        expected = value.to(torch.float32) if value.is_floating_point() else value
        assert loaded[name].dtype == expected.dtype
        assert torch.equal(loaded[name], expected)
    doc = json.loads(report.read_text())
    assert doc["target"] == "F32"
    rows = {r["name"]: r for r in doc["tensors"]}
    keys = {
        "name",
        "from",
        "to",
        "max_abs_err",
        "mean_abs_err",
        "max_rel_err",
        "overflow",
        "underflow",
        "nan",
        "lossless",
    }
    assert set(rows["layer.0.weight"]) >= keys
    assert rows["head.weight"]["lossless"] is True  # BF16 -> F32 is exact
    assert rows["layer.0.weight"]["from"] == "F64" and rows["layer.0.weight"]["to"] == "F32"


def test_cast_keep_glob(model, tmp_path, capsys):
    path, _ = model
    out_path = tmp_path / "o.safetensors"
    code, _, err = run(
        capsys,
        "cast",
        path,
        "--target",
        "F16",
        "-o",
        out_path,
        "--keep",
        "head.*",
        "--keep",
        "emb.*",
    )
    assert code == 0, err
    loaded = load_file(out_path)
    assert loaded["head.weight"].dtype == torch.bfloat16
    assert loaded["emb.weight"].dtype == torch.float32
    assert loaded["layer.0.weight"].dtype == torch.float16
    assert loaded["position_ids"].dtype == torch.int64


def test_cast_refuses_to_overwrite_the_input(model, capsys):
    path, _ = model
    before = path.read_bytes()
    code, _, err = run(capsys, "cast", path, "--target", "F16", "-o", path)
    assert code == 2
    assert err.startswith("checkpoint-inspector: error: ") and err.count("\n") == 1
    assert path.read_bytes() == before


def test_diff_forms(model, tmp_path, capsys):
    path, sd = model
    other = tmp_path / "other.safetensors"
    changed = dict(sd)
    changed["emb.weight"] = sd["emb.weight"] + 0.25
    save_file(changed, other)
    assert run(capsys, "diff", path, path)[0] == 0
    code, out, _ = run(capsys, "diff", path, other, "--json")
    assert code == 1
    rows = {r["name"]: r for r in json.loads(out)["tensors"]}
    assert rows["emb.weight"]["status"] == "differ"
    assert rows["emb.weight"]["max_abs_diff"] == pytest.approx(0.25, abs=1e-6)
    assert rows["position_ids"]["status"] == "equal"
    assert set(rows["emb.weight"]) >= {"name", "status", "max_abs_diff", "max_rel_diff"}
    assert run(capsys, "diff", path, other, "--atol", "0.3")[0] == 0


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["list"], "the following arguments are required: path"),
        (["list", "{tmp}/missing.safetensors"], "missing.safetensors: no such file"),
        (["list", "{model}", "--target", "F12"], "unknown dtype 'F12'"),
        (["cast", "{model}", "--target", "I64", "-o", "{tmp}/x.safetensors"], "cannot cast to I64"),
        (["diff", "{model}", "{model}", "--atol", "-1"], "--atol must be a non-negative number"),
        (["check", "{tmp}/renamed.safetensors"], "PyTorch pickle"),  # a .pt renamed
    ],
)
def test_bad_input_is_one_line_exit_2(model, tmp_path, capsys, argv, needle):
    path, _ = model
    torch.save({"w": torch.zeros(1)}, tmp_path / "renamed.safetensors")
    argv = [a.format(tmp=tmp_path, model=path) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith("checkpoint-inspector: error: ")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert needle in err


def test_module_and_console_script_entry(model):
    path, _ = model
    script = Path(sys.executable).with_name("checkpoint-inspector")
    for cmd in ([sys.executable, "-m", "inspector"], [str(script)]):
        proc = subprocess.run(
            [*cmd, "check", str(path)], capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 1
        assert "layer.0.weight: F64 (expected F32)" in proc.stdout
        bad = subprocess.run(
            [*cmd, "list", str(path) + ".nope"], capture_output=True, text=True, timeout=60
        )
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="Linux /proc")
def test_the_program_loads_numpy_with_one_blas_thread(tmp_path):
    """numpy's OpenBLAS starts a spinning thread per extra core when it loads; the program never
    multiplies matrices, and on two cores those threads took CPU from every cast."""
    save_file({"w": torch.ones(4)}, str(tmp_path / "m.safetensors"))
    code = (
        "import os, sys\n"
        "from inspector.cli.dispatch import console_main\n"
        "sys.argv = ['checkpoint-inspector', 'list', sys.argv[1]]\n"
        "console_main()\n"
        "print('numpy' in sys.modules, len(os.listdir('/proc/self/task')), file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    p = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "m.safetensors")],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert p.returncode == 0 and p.stderr == "True 1\n", p.stderr
