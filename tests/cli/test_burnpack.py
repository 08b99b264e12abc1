"""Burnpack through every command: list, --json, check, diff, cast, lint, and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from inspector.cli.dispatch import main
from tests.burnpack_files import BurnTensor, plain, write_burnpack
from tests.hostile_folders import snapshot
from tests.malformed.burnpack_corpus import BY_NAME

BURN_FILE = Path(__file__).parents[1] / "data" / "burn" / "mnist.bpk"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def f64_bpk(tmp_path):
    return write_burnpack(
        tmp_path / "m.bpk",
        [
            plain("fc.weight", np.ones((2, 3)), param_id=11),
            BurnTensor("fc.bias", "Flex32", [3], np.zeros(3, np.float32).tobytes(), 12),
            plain("steps", np.arange(2, dtype=np.int64)),
        ],
        {"format": "burnpack", "producer": "burn", "version": "0.21.0"},
    )


def test_list_check_and_json(f64_bpk, capsys):
    code, out, _ = run(capsys, "list", f64_bpk)
    assert code == 0
    assert out.splitlines()[-1].startswith("1 of 3 tensors differ from F32")
    code, out, _ = run(capsys, "check", f64_bpk)
    assert code == 1 and "fc.weight" in out
    code, out, _ = run(capsys, "list", "--json", f64_bpk)
    doc = json.loads(out)
    rows = {r["name"]: r for r in doc["tensors"]}
    assert rows["fc.weight"]["param_id"] == 11 and rows["fc.weight"]["dtype"] == "F64"
    assert rows["fc.bias"]["burn_dtype"] == "Flex32" and rows["fc.bias"]["dtype"] == "F32"
    assert "param_id" not in rows["steps"]
    assert doc["metadata"] == {"format": "burnpack", "producer": "burn", "version": "0.21.0"}
    assert doc["burnpack"] == {"version": 1, "scalars": {}}


def test_cast_writes_burnpack_and_says_how_burn_loads_it(f64_bpk, tmp_path, capsys):
    out_path = tmp_path / "m32.bpk"
    code, out, _ = run(capsys, "cast", f64_bpk, "--target", "F32", "-o", out_path)
    assert code == 0
    assert out.splitlines()[-1] == (
        'load it in burn with: BurnpackStore::from_file("m32.bpk")'
        ".with_from_adapter(FloatCastAdapter::to(DType::F32))"
    )
    code, out, _ = run(capsys, "check", out_path)
    assert code == 0
    code, out, _ = run(capsys, "list", "--json", out_path)
    rows = {r["name"]: r for r in json.loads(out)["tensors"]}
    assert rows["fc.bias"]["burn_dtype"] == "Flex32"  # kept: still the same bytes type
    assert rows["fc.weight"]["param_id"] == 11 and rows["steps"]["dtype"] == "I64"


def test_diff_burnpack_against_safetensors(tmp_path, capsys):
    save_file({"fc.weight": np.ones((2, 3), np.float32)}, str(tmp_path / "m.safetensors"))
    bpk = write_burnpack(tmp_path / "m.bpk", [plain("fc.weight", np.ones((2, 3)))])
    code, out, _ = run(capsys, "diff", bpk, tmp_path / "m.safetensors")
    assert code == 0  # the same values in another dtype
    assert out.splitlines() == [
        "A has burn's names and layouts, B PyTorch's: compared as PyTorchToBurnAdapter maps "
        "them (norms' gamma/beta as weight/bias, Linear weights transposed)",
        "dtype_only      fc.weight  max abs 0, max rel 0 (F64 vs F32)",
        "equal: 1 dtype_only",
    ]


@pytest.mark.parametrize("name", ["bad-magic", "overlap", "cbor-too-deep", "trailing-data"])
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path, capsys, name):
    case = BY_NAME[name]
    src = tmp_path / "in" / "m.bpk"
    src.parent.mkdir()
    src.write_bytes(case.build())
    before = snapshot(tmp_path)
    for argv in (["list", src], ["check", src], ["lint", src], ["cast", src, "--target", "F16",
                 "-o", tmp_path / "o.bpk"], ["diff", src, src], ["list", "--stats", src]):  # fmt: skip
        code, out, err = run(capsys, *argv)
        assert code == 2, argv
        assert err.count("\n") == 1 and case.reason in err and "Traceback" not in err
    assert snapshot(tmp_path) == before


def test_read_commands_change_no_byte(tmp_path, capsys):
    folder = tmp_path / "burn"
    folder.mkdir()
    shutil.copy(BURN_FILE, folder / "model.bpk")
    before = snapshot(tmp_path)
    for argv in (["list", folder], ["list", "--stats", folder], ["check", folder],
                 ["lint", folder], ["scan", folder], ["diff", folder, folder]):  # fmt: skip
        code, _out, _err = run(capsys, *argv)
        assert code in (0, 1), argv
    assert snapshot(tmp_path) == before


def test_read_commands_change_no_byte_of_a_gguf_folder(tmp_path, capsys):
    """list, check, lint, scan and diff of llama.cpp's files and their HF original."""
    data = Path(__file__).parents[1] / "data" / "gguf"
    folder = tmp_path / "gguf"
    shutil.copytree(data, folder)
    q4 = folder / "tiny-llama-Q4_K_M.gguf"
    before = snapshot(tmp_path)
    for argv in (["list", q4], ["list", "--stats", q4], ["list", "--json", q4], ["check", q4],
                 ["lint", q4], ["scan", folder], ["diff", q4, folder / "tiny-llama"]):  # fmt: skip
        code, _out, err = run(capsys, *argv)
        assert code in (0, 1), (argv, err)
    assert snapshot(tmp_path) == before
