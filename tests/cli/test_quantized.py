"""The command line on quantized checkpoints: list shows one logical row per quantized weight,
check counts them as matching and never proposes a cast of codes, lint does not call FP8
weights a config-dtype mismatch, and a refused cast exits 2 with one line."""

from __future__ import annotations

import json

from inspector.cli import main
from tests.quant_folders import deepseek_folder, folder, gptq_tensors, nvfp4_stacked

W = "model.layers.0.mlp.up_proj.weight"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_the_logical_weight_with_its_companions_under_it(tmp_path, capsys):
    deepseek_folder(tmp_path / "q")
    code, out, err = run(capsys, "list", tmp_path / "q")
    assert code == 0 and err == ""
    lines = out.splitlines()
    row = next(line for line in lines if line.startswith(W + " "))
    assert "[256, 256]" in row and "quantized: F8_E4M3, block 128×128, scales F32" in row
    assert lines[lines.index(row) + 1].split()[:2] == ["└", W]
    assert lines[lines.index(row) + 2].split()[:2] == ["└", W + "_scale_inv"]
    assert lines[-1].startswith("0 of 3 tensors differ from BF16 · 1 quantized (FP8 block-scaled")


def test_list_json_has_a_quant_object_and_logical_params(tmp_path, capsys):
    deepseek_folder(tmp_path / "q")
    code, out, _ = run(capsys, "list", tmp_path / "q", "--json")
    doc = json.loads(out)
    rows = {r["name"]: r for r in doc["tensors"]}
    assert set(rows) == {W, "model.norm.weight", "lm_head.weight"}
    assert rows[W]["shape"] == [256, 256] and rows[W]["status"] == "quantized"
    # codes and scales: 256 × 256 F8 and 2 × 2 F32; a quantized weight has no target to match
    assert (rows[W]["file"], rows[W]["nbytes"]) == ("model.safetensors", 65536 + 16)
    assert rows[W]["matches_target"] is None
    assert rows[W]["quant"] == {
        "scheme": "fp8",
        "storage_dtype": "F8_E4M3",
        "block": [128, 128],
        "companions": [W + "_scale_inv"],
    }
    assert doc["quantization"]["confirmed"] and doc["quantization"]["dequantizable"]


def test_check_counts_quantized_weights_as_matching(tmp_path, capsys):
    deepseek_folder(tmp_path / "q")
    code, out, _ = run(capsys, "check", tmp_path / "q")
    assert code == 0, out
    assert out.startswith("ok: all 2 float tensors are BF16")
    assert "1 quantized weight; a cast dequantizes it" in out


def test_check_never_proposes_a_cast_that_would_be_refused(tmp_path, capsys):
    import ml_dtypes
    import numpy as np

    from tests.quant_folders import BF16

    qc = {"quant_method": "awq", "bits": 4, "group_size": 32, "version": "gemv"}
    norm = ("model.norm.weight", BF16, np.ones(8, ml_dtypes.bfloat16))
    folder(tmp_path / "q", [*gptq_tensors()[:-1], norm], qc)
    code, out, _ = run(capsys, "check", tmp_path / "q", "--target", "F32")
    assert code == 1
    assert "fix:" not in out
    assert "no fix by cast: AWQ version 'gemv' packs its weights in a layout not read yet" in out


def test_lint_does_not_call_fp8_weights_a_config_dtype_mismatch(tmp_path, capsys):
    deepseek_folder(tmp_path / "q")
    code, out, _ = run(capsys, "lint", tmp_path / "q", "--json")
    assert code == 0 and json.loads(out)["findings"] == []


def test_lint_reports_scales_that_do_not_fit_and_unused_ignores(tmp_path, capsys):
    import numpy as np

    from inspector.core.opening import open_checkpoint
    from inspector.core.save.writer import save_arrays
    from tests.quant_folders import F32

    deepseek_folder(tmp_path / "q")
    with open_checkpoint(str(tmp_path / "q")) as ckpt:
        kept = [(t.name, t.dtype, np.array(ckpt.view(t))) for t in ckpt.tensors]
    kept = [(n, d, np.full((2, 1), np.nan, np.float32) if n.endswith("_inv") else v)
            for n, d, v in kept]  # fmt: skip
    save_arrays(tmp_path / "q" / "model.safetensors", kept)
    config = json.loads((tmp_path / "q" / "config.json").read_text())
    config["quantization_config"]["modules_to_not_convert"] = ["lm_head", "vision_tower", "audio"]
    (tmp_path / "q" / "config.json").write_text(json.dumps(config))
    code, out, _ = run(capsys, "lint", tmp_path / "q", "--json", "--stats")
    assert code == 1
    assert json.loads(out)["findings"] == [
        {
            "severity": "error",
            "code": "quant_mismatch",
            "message": "Quantized tensors that do not fit FP8 block-scaled (quant_method fp8): 1; "
            f"the first: scale '{W}_scale_inv' is F32 [2, 1]; weight [256, 256] with blocks "
            "[128, 128] needs F32 [2, 2]",
            "tensors": [],
            "files": ["config.json"],
        },
        {
            "severity": "info",
            "code": "quant_ignore_unused",
            "message": "quantization_config names modules the checkpoint does not have: "
            "vision_tower, audio",
            "tensors": [],
            "files": ["config.json"],
        },
        {
            "severity": "warning",
            "code": "nan_inf",
            "message": "Tensors that hold NaN or ±inf values: 1",
            "tensors": [W + "_scale_inv"],
            "files": [],
        },
        {
            "severity": "error",
            "code": "quant_bad_scales",
            "message": "Quantized weights with a scale that is 0, negative, inf or NaN: 1",
            "tensors": [W],
            "files": [],
        },
    ]
    assert F32.name == "F32"


def test_lint_judges_each_kind_of_ignore_entry_by_its_own_rule(tmp_path, capsys):
    """``ignore`` names modules exactly, ``re:`` entries are patterns (a broken one matches
    nothing), class names and empty entries are not judged. Only the entries naming no module
    are listed, in their order. (Mutation testing: each rule swapped for another passed.)"""
    deepseek_folder(tmp_path / "q")
    config = json.loads((tmp_path / "q" / "config.json").read_text())
    config["quantization_config"]["ignore"] = [
        "lm_head", "model.layers.0.mlp", "Linear", "", 7, "re:.*up_proj", "re:[", "vision",
    ]  # fmt: skip
    (tmp_path / "q" / "config.json").write_text(json.dumps(config))
    code, out, _ = run(capsys, "lint", tmp_path / "q", "--json")
    assert (code, json.loads(out)["findings"]) == (
        1,
        [
            {
                "severity": "info",
                "code": "quant_ignore_unused",
                "message": "quantization_config names modules the checkpoint does not have: "
                "model.layers.0.mlp, re:[, vision",
                "tensors": [],
                "files": ["config.json"],
            }
        ],
    )


def test_lint_stats_names_fp8_weights_holding_nan_codes_and_passes_good_scales(tmp_path, capsys):
    """One NaN code (0x7F in E4M3) among good codes names its weight; the folder's scales,
    all positive and below 1, are not called bad. (Mutation testing: a check that skipped the
    codes, or called scales up to 1 bad, passed.)"""
    import numpy as np

    from inspector.core.opening import open_checkpoint
    from inspector.core.save.writer import save_arrays

    deepseek_folder(tmp_path / "q")
    with open_checkpoint(str(tmp_path / "q")) as ckpt:
        kept = [(t.name, t.dtype, np.array(ckpt.view(t))) for t in ckpt.tensors]
    name, dtype, codes = next(k for k in kept if k[0] == W)
    codes = codes.copy()
    codes.view(np.uint8)[3, 5] = 0x7F
    save_arrays(tmp_path / "q" / "model.safetensors", [
        (n, d, codes if n == W else v) for n, d, v in kept
    ])  # fmt: skip
    code, out, _ = run(capsys, "lint", tmp_path / "q", "--json", "--stats")
    assert (code, json.loads(out)["findings"]) == (
        1,
        [
            {
                "severity": "warning",
                "code": "nan_inf",
                "message": "Tensors that hold NaN or ±inf values: 1",
                "tensors": [W],
                "files": [],
            },
            {
                "severity": "error",
                "code": "quant_nan_codes",
                "message": "FP8 weights that hold NaN codes: 1",
                "tensors": [W],
                "files": [],
            },
        ],
    )


def test_a_refused_cast_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys):
    folder(tmp_path / "q", gptq_tensors(), {"quant_method": "gptq", "bits": 3})
    code, out, err = run(capsys, "cast", tmp_path / "q", "--target", "BF16", "-o", tmp_path / "o")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "3-bit GPTQ packing is not read yet" in err
    assert not (tmp_path / "o").exists()


def test_a_dequantizing_cast_says_so(tmp_path, capsys):
    deepseek_folder(tmp_path / "q")
    code, out, _ = run(capsys, "cast", tmp_path / "q", "-o", tmp_path / "o")
    assert code == 0
    assert "1 quantized weight dequantized to BF16 (fp8), 0 other tensors cast" in out


def test_lint_names_scales_stored_in_another_dtype_than_the_config_says(tmp_path, capsys):
    import ml_dtypes
    import numpy as np

    from tests.quant_folders import BF16, F8

    qc = {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {
        "g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float",
              "strategy": "channel", "scale_dtype": "torch.float32"}}}}  # fmt: skip
    tensors = [
        ("m.weight", F8, np.zeros((4, 4), ml_dtypes.float8_e4m3fn)),
        ("m.weight_scale", BF16, np.ones((4, 1), ml_dtypes.bfloat16)),
    ]
    folder(tmp_path / "q", tensors, qc)
    code, out, _ = run(capsys, "lint", tmp_path / "q", "--json")
    codes = {f["code"]: f for f in json.loads(out)["findings"]}
    assert code == 1
    assert codes["quant_scale_dtype"] == {
        "severity": "warning",
        "code": "quant_scale_dtype",
        "message": "Scales stored in another dtype than the config says: 1; the first: "
        "'m.weight_scale' is BF16; the config's scale_dtype says F32",
        "tensors": [],
        "files": ["config.json"],
    }


def test_list_stats_gives_the_dequantized_values_and_the_storage_figures(tmp_path, capsys):
    import numpy as np

    made = deepseek_folder(tmp_path / "q")
    code, out, _ = run(capsys, "list", tmp_path / "q", "--stats", "--json")
    row = {r["name"]: r for r in json.loads(out)["tensors"]}[W]
    values = made["codes"].astype(np.float32) * np.repeat(np.repeat(made["scale"], 128, 0), 128, 1)
    assert (row["min"], row["max"]) == (float(values.min()), float(values.max()))
    codes = made["codes"].view(np.uint8)
    assert row["storage"]["codes_used"] == len(np.unique(codes))
    assert row["storage"]["saturated"] == int(((codes & 0x7F) == 0x7E).sum())
    assert row["storage"]["scale_max"] == float(made["scale"].max())


def test_lint_stats_judges_mxfp4_scales_as_e8m0_bytes(tmp_path, capsys):
    """MXFP4 scales are E8M0 bytes: 0xFF is NaN (bad), any other byte a power of two (0 is
    2**-127, fine). (Mutation testing: judging the bytes as float values called 0xFF fine and
    0 bad.)"""
    from tests.quant_folders import gpt_oss_tensors

    found = {}
    for byte in (0xFF, 0):
        (blocks, scales) = gpt_oss_tensors()
        values = scales[2].copy()
        values[1, 0, 0] = byte
        folder(
            tmp_path / str(byte),
            [blocks, (scales[0], scales[1], values)],
            {"quant_method": "mxfp4"},
        )
        code, out, _ = run(capsys, "lint", tmp_path / str(byte), "--json", "--stats")
        found[byte] = [f for f in json.loads(out)["findings"] if f["code"].startswith("quant_")]
    assert found == {
        0xFF: [
            {
                "severity": "error",
                "code": "quant_bad_scales",
                "message": "Quantized weights with a scale that is 0, negative, inf or NaN: 1",
                "tensors": ["model.layers.0.mlp.experts.gate_up_proj"],
                "files": [],
            }
        ],
        0: [],
    }


def test_lint_stats_counts_every_zero_scale_and_names_the_first_twenty(tmp_path, capsys):
    """A scale of exactly 0 is bad (a weight of zeros whatever its codes); 21 such weights are
    counted in full and the first 20 named. (Mutation testing: "< 0" let 0 pass, and a list of
    21 names passed.)"""
    import ml_dtypes
    import numpy as np

    from tests.quant_folders import F8, F32

    qc = {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {
        "g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float",
              "strategy": "channel", "scale_dtype": "torch.float32"}}}}  # fmt: skip
    tensors = []
    for i in range(21):
        tensors += [
            (f"m{i:02}.weight", F8, np.ones((4, 4), ml_dtypes.float8_e4m3fn)),
            (f"m{i:02}.weight_scale", F32, np.zeros((4, 1), np.float32)),
        ]
    folder(tmp_path / "q", tensors, qc)
    code, out, _ = run(capsys, "lint", tmp_path / "q", "--json", "--stats")
    assert [f for f in json.loads(out)["findings"] if f["code"].startswith("quant_")] == [
        {
            "severity": "error",
            "code": "quant_bad_scales",
            "message": "Quantized weights with a scale that is 0, negative, inf or NaN: 21",
            "tensors": [f"m{i:02}.weight" for i in range(20)],
            "files": [],
        }
    ]


REFUSAL = (
    "'m.weight' (compressed-tensors NVFP4): FP4 codes of 3 dimensions (compressed-tensors "
    "unpacks FP4 matrices only)"
)


def test_check_and_list_say_a_cast_is_refused_before_one_is_tried(tmp_path, capsys):
    """Before: check said "a cast dequantizes it" and list --json "dequantizable": true; only
    the cast refused."""
    path = folder(tmp_path / "q", *nvfp4_stacked())
    code, out, _ = run(capsys, "check", path)
    assert code == 0 and "a cast dequantizes" not in out
    assert out.splitlines()[-1].endswith(f"1 quantized weight; a cast is refused: {REFUSAL}")
    code, out, _ = run(capsys, "list", path, "--json")
    assert code == 0
    assert json.loads(out)["quantization"] | {"scheme": None} == {
        "scheme": None, "confirmed": True, "weights": 1, "problems": [REFUSAL],
        "dequantizable": False,
    }  # fmt: skip
    code, _, err = run(capsys, "cast", path, "-o", tmp_path / "out", "--target", "F32")
    assert code == 2 and REFUSAL in err and not (tmp_path / "out").exists()
