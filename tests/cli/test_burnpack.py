"""Burnpack through every command: list, --json, check, diff, cast, lint, and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from inspector.cli.dispatch import main
from inspector.core.opening import open_checkpoint
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


@pytest.mark.parametrize(
    "name",
    ["bad-magic", "overlap", "cbor-too-deep", "trailing-data", "qfloat-unknown-field",
     "qfloat-burn-0.21-size", "qfloat-size-packed-row", "qfloat-block-more-dims"],
)  # fmt: skip
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


QFLOAT = BURN_FILE.parent / "qfloat.bpk"
QFLOAT_EXPECTED = BURN_FILE.parent / "qfloat_expected.bpk"


def test_burn_quantized_tensors_listed_as_quantized(capsys):
    code, out, _ = run(capsys, "list", QFLOAT)
    assert code == 0
    lines = out.splitlines()
    assert (
        "q8s_block32                 Q8S      [4, 64]                   288 B  quantized: "
        "QFloat(Q8S, block 32), 9 bits/weight"
    ) in lines
    assert "  └ q8s_block32             U8       [288]                     288 B" in lines
    assert lines[-1].startswith("0 of 13 tensors differ from F32 · 12 quantized (burn QFloat ")
    code, out, _ = run(capsys, "list", "--json", QFLOAT)
    rows = {r["name"]: r for r in json.loads(out)["tensors"]}
    row = rows["q4s_block16_packed"]
    assert row["status"] == "quantized" and row["shape"] == [4, 32]
    assert row["quant"] == {"scheme": "burn-qfloat", "bits_per_weight": 6.0, "block": [16],
                            "storage_dtype": "QFloat(Q4S, block 16, packed u32)", "companions": []}  # fmt: skip


def test_burn_quantized_stats_diff_and_cast_are_burns_values(tmp_path, capsys):
    code, out, _ = run(capsys, "list", "--stats", QFLOAT)
    assert code == 0
    assert (
        "storage:                    codes used 3 of 3 · saturated 30 · scales 0.9984 … 0.9984 · 0 bad"
        in out
    )
    code, out, _ = run(capsys, "diff", QFLOAT, QFLOAT_EXPECTED)
    assert code == 0 and out.splitlines()[-1] == "equal: 12 dtype_only, 1 equal"
    code, out, _ = run(capsys, "cast", QFLOAT, "--target", "F32", "-o", tmp_path / "o.bpk")
    assert code == 0
    assert out.splitlines()[0] == (
        f"wrote {tmp_path / 'o.bpk'}: 12 quantized weights dequantized to F32 (burn-qfloat), "
        "0 other tensors cast"
    )
    # the values burn computes, in the file burn's writer makes of them: byte for byte
    assert (tmp_path / "o.bpk").read_bytes() == QFLOAT_EXPECTED.read_bytes()
    # --keep does not keep a quantized weight: like every quantized source, it is dequantized
    code, _, _ = run(capsys, "cast", QFLOAT, "--target", "F32", "--keep", "q8s*", "-o",
                     tmp_path / "k.bpk")  # fmt: skip
    assert code == 0 and (tmp_path / "k.bpk").read_bytes() == QFLOAT_EXPECTED.read_bytes()
    code, _, _ = run(capsys, "cast", QFLOAT, "--target", "BF16", "-o", tmp_path / "o.safetensors")
    assert code == 0
    out16 = load_file(str(tmp_path / "o.safetensors"))
    with open_checkpoint(QFLOAT_EXPECTED) as want:  # burn's F32 values, rounded once to BF16
        for t in want.tensors:
            rounded = np.array(want.view(t)).astype(ml_dtypes.bfloat16)
            assert out16[t.name].tobytes() == rounded.tobytes(), t.name


def test_a_scheme_burn_does_not_dequantize_is_refused_by_name(tmp_path, capsys):
    e4m3 = {"value": "E4M3", "store": "Native", "mode": "Symmetric", "tensor": None, "block": None}
    (tmp_path / "in").mkdir()
    src = write_burnpack(tmp_path / "in" / "e.bpk", [
        BurnTensor("w", {"QFloat": e4m3}, [2, 4], bytes(8) + np.float32(1).tobytes()),
        plain("b", np.ones(2, np.float32)),
    ])  # fmt: skip
    why = (
        "tensor 'w' is QFloat(E4M3, tensor): burn's CPU backend does not dequantize E4M3 values; "
        "a cast would have to guess its values, so it is refused"
    )
    before = snapshot(tmp_path)
    code, out, err = run(capsys, "cast", src, "--target", "F16", "-o", tmp_path / "o.bpk")
    assert code == 2 and err == f"checkpoint-inspector: error: {src}: {why}\n"
    assert snapshot(tmp_path) == before
    code, out, _ = run(capsys, "list", "--stats", src)
    assert code == 0 and "dequantized:" not in out  # no numbers of the stored bytes as values
    assert out.splitlines()[-1] == f"quantized values not shown: {why}"
