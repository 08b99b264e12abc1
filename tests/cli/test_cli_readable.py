"""A CLI a person can read: natural order with the differing tensors first, honest cast totals,
--stats within 120 columns, list --json saying which target it compared with."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inspector.cli.dispatch import main
from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays

F32, F64, BF16, I64 = DTYPES["F32"], DTYPES["F64"], DTYPES["BF16"], DTYPES["I64"]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def llm(tmp_path):
    """LLM-style names: layers 0..11, an F32 norm per layer, two BF16 tensors at the end."""
    p = tmp_path / "llm.safetensors"
    arrays = []
    for i in range(12):
        arrays.append((f"model.layers.{i}.mlp.down_proj.weight", F32, np.ones(4, np.float32)))
        arrays.append((f"model.layers.{i}.input_layernorm.weight", F32, np.ones(2, np.float32)))
    arrays.append(("lm_head.weight", BF16, np.ones(4, dtype=BF16.numpy)))
    arrays.append(("model.embed_tokens.weight", BF16, np.ones(4, dtype=BF16.numpy)))
    arrays.append(("position_ids", I64, np.arange(3)))
    arrays.sort(
        key=lambda a: (a[1].name, a[0])
    )  # as safetensors writes: by dtype, then name as text
    save_arrays(p, arrays)
    return p


def names_in(out: str) -> list[str]:
    return [line.split()[0] for line in out.splitlines()[1:-1] if line.strip()]


def test_list_is_in_natural_order_with_differing_first(llm, capsys):
    code, out, _ = run(capsys, "list", llm)
    names = names_in(out)
    assert names[:2] == ["lm_head.weight", "model.embed_tokens.weight"]  # the differing ones
    layers = [n for n in names if n.endswith("down_proj.weight")]
    assert layers == [f"model.layers.{i}.mlp.down_proj.weight" for i in range(12)]  # 2 before 10
    code, out, _ = run(capsys, "list", llm, "--order", "file")
    assert names_in(out)[0] == "lm_head.weight" and names_in(out)[2].startswith("model.layers.0.")
    assert names_in(out)[4] == "model.layers.1.input_layernorm.weight"  # text order: 1, 10, 11, 2
    assert names_in(out)[6] == "model.layers.10.input_layernorm.weight"


def test_list_json_names_its_target_and_follows_the_order(llm, capsys):
    code, out, _ = run(capsys, "list", llm, "--json", "--target", "bf16")
    doc = json.loads(out)
    assert doc["target"] == "BF16"
    assert doc["tensors"][0]["matches_target"] is False  # F32 tensors differ from BF16: first
    assert all(r["matches_target"] is not True for r in doc["tensors"][:24])


def test_cast_summary_gives_overflow_underflow_totals_and_the_worst_tensors(tmp_path, capsys):
    p = tmp_path / "m.safetensors"
    save_arrays(
        p,
        [
            ("mask_bias", F32, np.full(100, -1e9, np.float32)),
            ("big", F32, np.array([1e6, 1.0], np.float32)),
            ("tiny", F32, np.array([0.0, -0.0, 1e-10, 1.0001], np.float32)),
        ],
    )
    code, out, _ = run(capsys, "cast", p, "--target", "F16", "-o", tmp_path / "o.safetensors")
    lines = out.splitlines()
    assert code == 0 and lines[0].endswith("3 of 3 tensors cast to F16, 0 of them lossless")
    assert lines[1] == "  101 values overflowed to ±inf or were saturated: mask_bias (100), big (1)"
    assert lines[2] == "  1 non-zero value became zero: tiny (1)"


def test_list_stats_fits_120_columns(llm, tmp_path, capsys):
    long = tmp_path / "long.safetensors"
    save_arrays(
        long, [("model.layers.0.self_attn.rotary_emb.inv_freq.extra.long", F64, np.ones(3))]
    )
    for p in (llm, long):
        code, out, _ = run(capsys, "list", p, "--stats")
        assert code == 0 and max(len(line) for line in out.splitlines()[:-1]) <= 120
    assert (
        "model.layers.0.self_attn.rotary_emb.inv_freq.extra.long\n" in out
    )  # on a line of its own


def test_help_names_every_command_and_every_input_kind(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "list, check, cast, quantize, diff, scan, lint" in out
    assert ".pt .pth .bin .ckpt" in out and "scan PATH" in out and "lint PATH" in out
    with pytest.raises(SystemExit):
        main(["lint", "--help"])
    assert "config.json's dtype against the weights" in capsys.readouterr().out


def test_scan_of_a_safetensors_file_says_one_thing(tmp_path, capsys):
    save_arrays(tmp_path / "m.safetensors", [("w", DTYPES["F32"], np.ones(2, np.float32))])
    assert main(["scan", str(tmp_path / "m.safetensors")]) == 0
    out = capsys.readouterr().out
    assert "no pickle: nothing in it can run code" in out and "tensor rebuilds" not in out


def test_an_integer_tensor_has_one_word_in_list_and_list_stats(tmp_path, capsys):
    """ "kept (not a float)" in list, "kept" in list --stats, "not a float" in the window."""
    save_arrays(tmp_path / "m.safetensors", [("ids", DTYPES["I64"], np.arange(3))])
    main(["list", str(tmp_path / "m.safetensors")])
    assert "kept (not a float)" in capsys.readouterr().out
    main(["list", str(tmp_path / "m.safetensors"), "--stats"])
    assert "not a float" in capsys.readouterr().out
