"""One target rule for every command (and the window): ``--target`` wins; else the checkpoint's
config.json dtype; else F32. ``check FOLDER`` said "ok: all F32" for a folder whose config says
bfloat16 while the window flagged every tensor, and ``cast --target config`` was refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inspector.cli.dispatch import main
from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.save.writer import save_arrays
from inspector.core.target_rule import TargetSource, pick_target

F32, BF16, F16 = DTYPES["F32"], DTYPES["BF16"], DTYPES["F16"]


@pytest.fixture
def bf16_folder(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    save_arrays(folder / "model.safetensors", [("w", F32, np.ones(4, np.float32))])
    (folder / "config.json").write_text(json.dumps({"torch_dtype": "bfloat16"}))
    return folder


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_check_of_a_folder_judges_against_its_config(capsys, bf16_folder):
    code, out, _ = _run(capsys, "check", bf16_folder)
    assert code == 1 and "w: F32 (expected BF16)" in out
    assert _run(capsys, "check", bf16_folder, "--target", "F32")[0] == 0  # explicit wins
    assert _run(capsys, "check", bf16_folder / "model.safetensors")[0] == 1  # a file of it too


def test_list_json_matches_the_config_dtype(capsys, bf16_folder):
    code, out, _ = _run(capsys, "list", bf16_folder, "--json")
    assert code == 0 and json.loads(out)["tensors"][0]["matches_target"] is False


def test_cast_takes_the_config_dtype_or_config_by_name(capsys, bf16_folder, tmp_path):
    code, out, err = _run(capsys, "cast", bf16_folder, "--target", "config", "-o", tmp_path / "a")
    assert code == 0, err
    code, out, err = _run(capsys, "cast", bf16_folder, "-o", tmp_path / "b")
    assert code == 0, err
    assert "cast to BF16" in out
    for name in ("a", "b"):
        cfg = json.loads((tmp_path / name / "config.json").read_text())
        assert cfg["torch_dtype"] == "bfloat16"
        with open_checkpoint(tmp_path / name) as out_ckpt:
            assert out_ckpt["w"].dtype is BF16


def test_a_file_without_config_is_judged_against_f32(capsys, tmp_path):
    save_arrays(tmp_path / "m.safetensors", [("w", F16, np.ones(4, np.float16))])
    code, out, _ = _run(capsys, "check", tmp_path / "m.safetensors")
    assert code == 1 and "expected F32" in out


def test_the_rule():
    assert pick_target(F16, BF16) == pick_target(F16, None)
    assert pick_target(F16, BF16).source is TargetSource.CHOSEN
    assert (pick_target(None, BF16).dtype, pick_target(None, BF16).source) == (
        BF16,
        TargetSource.CONFIG,
    )
    assert pick_target(None, None).dtype is F32
    assert pick_target(None, None, F16) == pick_target(None, None, F16)
    assert pick_target(None, None, F16).source is TargetSource.DEFAULT
