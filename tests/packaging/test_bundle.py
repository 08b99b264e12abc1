"""The PyInstaller bundle runs headless: `list`, `--screenshot`, errors, and nothing test-only inside.

Slow (builds the bundle when dist/ has none): `make package-test`, or pytest --run-slow.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "dist" / "checkpoint-inspector"
EXE_SUFFIX = ".exe" if sys.platform == "win32" else ""
CLI = BUNDLE / f"checkpoint-inspector{EXE_SUFFIX}"
GUI = BUNDLE / f"checkpoint-inspector-gui{EXE_SUFFIX}"


@pytest.fixture(scope="module")
def bundle() -> Path:
    if not CLI.exists():
        subprocess.run(
            ["bash", str(ROOT / "packaging" / "build.sh")],
            check=True,
            env=dict(os.environ, PYTHON=sys.executable),
        )
    assert CLI.exists() and GUI.exists()
    return BUNDLE


def _add_bf16(path: Path, name: str, values: np.ndarray) -> None:
    """Append a BF16 tensor (numpy's safetensors backend cannot write one) by rewriting the file."""
    import ml_dtypes

    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    data = raw[8 + n :]
    extra = values.astype(ml_dtypes.bfloat16).tobytes()
    header[name] = {
        "dtype": "BF16",
        "shape": list(values.shape),
        "data_offsets": [len(data), len(data) + len(extra)],
    }
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + data + extra)


@pytest.fixture
def model(tmp_path) -> Path:
    path = tmp_path / "small model.safetensors"  # a space, as file managers pass them
    save_file(
        {
            "embed.weight": np.arange(24, dtype=np.float32).reshape(6, 4),
            "head.weight": np.ones((4, 4), np.float64),
            "position_ids": np.arange(6, dtype=np.int64),
        },
        str(path),
        metadata={"format": "pt"},
    )
    # BF16 data goes through ml_dtypes, which the app imports lazily: the bundle must have it
    _add_bf16(path, "norm.weight", np.linspace(-2, 2, 8, dtype=np.float32))
    return path


def run(exe: Path, *args, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run(
        [str(exe), *map(str, args)], capture_output=True, text=True, env=env, timeout=120, cwd=cwd
    )


def test_version(bundle):
    r = run(CLI, "--version")
    assert r.returncode == 0 and r.stdout.split() == ["checkpoint-inspector", "0.1.0"]


def test_list(bundle, model):
    r = run(CLI, "list", model)
    assert r.returncode == 0, r.stderr
    for name in ("embed.weight", "head.weight", "position_ids"):
        assert name in r.stdout


def test_list_json(bundle, model, tmp_path):
    r = run(CLI, "list", model, "--json", "--stats", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    tensors = {t["name"]: t for t in json.loads(r.stdout)["tensors"]}
    assert tensors["head.weight"]["dtype"] == "F64"
    assert tensors["head.weight"]["matches_target"] is False
    assert tensors["position_ids"]["matches_target"] is None
    assert tensors["norm.weight"]["dtype"] == "BF16"
    assert tensors["norm.weight"]["min"] == -2.0 and tensors["norm.weight"]["max"] == 2.0


def test_bad_input_is_one_line_exit_2(bundle, tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"PK\x03\x04 not a safetensors file")
    r = run(CLI, "list", bad)
    assert r.returncode == 2
    assert r.stderr.startswith("checkpoint-inspector: error: ") and r.stderr.count("\n") == 1


def test_cast_check_diff(bundle, model, tmp_path):
    out = tmp_path / "out.safetensors"
    report = tmp_path / "report.json"
    r = run(CLI, "cast", model, "--target", "F16", "-o", out, "--report", report)
    assert r.returncode == 0, r.stderr
    assert json.loads(report.read_text())["target"] == "F16"
    assert run(CLI, "check", out, "--target", "F16").returncode == 0
    assert run(CLI, "check", model, "--target", "F16").returncode == 1
    r = run(CLI, "diff", model, out, "--json")
    # small integers and ones are exact in F16: only the dtype changed, values are equal
    assert r.returncode == 0, r.stderr
    status = {t["name"]: t["status"] for t in json.loads(r.stdout)["tensors"]}
    assert status["embed.weight"] == "dtype_only" and status["position_ids"] == "equal"
    assert status["norm.weight"] in {"dtype_only", "differ"}  # BF16 → F16 was really cast


def test_a_cast_in_worker_processes_matches_threads(bundle, model, tmp_path):
    """The frozen executable starts its workers as itself (multiprocessing.freeze_support)."""
    outs = []
    for n in ("0", "2"):
        out = tmp_path / f"out{n}.safetensors"
        env = dict(os.environ, CHECKPOINT_INSPECTOR_CAST_PROCESSES=n)
        r = subprocess.run(
            [str(CLI), "cast", str(model), "--target", "F16", "-o", str(out)],
            capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
        assert r.returncode == 0 and r.stderr == "", r.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


@pytest.mark.parametrize(
    ("exe", "extra"),
    [(CLI, []), (GUI, []), (CLI, ["--reference"])],
    ids=["cli", "gui", "with-reference"],
)
def test_screenshot(bundle, model, tmp_path, exe, extra):
    out = tmp_path / "shot.png"
    if extra:
        extra = [*extra, model]
    r = run(exe, "--screenshot", out, "--target", "bf16", *extra, model)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "Error" not in r.stderr, r.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 400 and height >= 300


def test_resources_and_no_test_only_packages(bundle):
    internal = bundle / "_internal"
    assert (internal / "resources" / "icons" / "checkpoint-inspector.png").is_file()
    for unwanted in (
        "torch", "pytest", "hypothesis", "tkinter", "PySide6/QtQml.abi3.so", "transformers",
        "picklescan",
    ):  # fmt: skip
        assert not (internal / unwanted).exists(), unwanted


def test_pickles_and_model_folders(bundle, tmp_path):
    """The bundle reads a .pt without torch inside it, scans it, converts it, and lints a folder."""
    torch = pytest.importorskip("torch")
    pt = tmp_path / "m.pt"
    torch.save({"state_dict": {"w": torch.randn(3, 2, dtype=torch.float64).t()}, "epoch": 2}, pt)
    r = run(CLI, "list", pt)
    assert r.returncode == 0, r.stderr
    # a training loop's checkpoint: the model's weights under the names the model expects
    assert "\nw " in r.stdout and "epoch = 2" in r.stdout and "training loop checkpoint" in r.stderr
    assert "state_dict.w" in run(CLI, "list", pt, "--keep-all").stdout
    assert run(CLI, "scan", pt).returncode == 0
    out = tmp_path / "m.safetensors"
    assert run(CLI, "cast", pt, "--target", "F32", "-o", out).returncode == 0
    assert run(CLI, "check", out, "--target", "F32").returncode == 0
    (tmp_path / "config.json").write_text('{"torch_dtype": "bfloat16"}')
    r = run(CLI, "lint", tmp_path, "--json")
    assert r.returncode == 1, r.stderr
    codes = {f["code"] for f in json.loads(r.stdout)["findings"]}
    assert "config_dtype" in codes


def test_burnpack_and_gguf(bundle, tmp_path):
    """The bundle reads burn's own .bpk (cbor2 inside it) and a GGUF with a quantized tensor
    (the gguf package and its yaml inside it), and dequantizes it in a cast."""
    import numpy as np

    from tests.gguf_files import Q, write_gguf

    bpk = ROOT / "tests" / "data" / "burn" / "mnist.bpk"
    r = run(CLI, "list", bpk)
    assert r.returncode == 0 and "fc1.weight" in r.stdout, r.stderr
    a = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    gguf = write_gguf(tmp_path / "m.gguf", {"w": (a, Q.Q8_0)})
    r = run(CLI, "cast", gguf, "--target", "F32", "-o", tmp_path / "m.safetensors")
    assert r.returncode == 0, r.stderr
    assert "1 quantized weight dequantized to F32 (gguf)" in r.stdout
