"""Model folders made by transformers ``save_pretrained``: the config's dtype (``--target config``),
norms kept in F32 on purpose, a cast output that ``from_pretrained`` loads in the target dtype, and
``lint`` finding each way a folder gets broken."""

from __future__ import annotations

import json
import shutil

import pytest

from inspector.cli.dispatch import main
from inspector.core.model_folder.config import config_with_dtype, read_model_config

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def _tiny(folder, dtype=torch.float32, shard="2MB", tie=False, seed=0):
    cfg = transformers.LlamaConfig(
        vocab_size=64,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=32,
        tie_word_embeddings=tie,
    )
    torch.manual_seed(seed)
    model = transformers.LlamaForCausalLM(cfg).to(dtype)
    model.save_pretrained(folder, max_shard_size=shard)
    return model


def _set_config(folder, **fields):
    path = folder / "config.json"
    cfg = json.loads(path.read_text())
    cfg.update(fields)
    path.write_text(json.dumps(cfg, indent=2))


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_config_dtype_spellings(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"torch_dtype": "bfloat16"}))
    assert read_model_config(str(tmp_path)).dtype.name == "BF16"
    (tmp_path / "config.json").write_text(
        json.dumps({"dtype": "float16", "torch_dtype": "float32"})
    )
    assert read_model_config(str(tmp_path)).dtype_key == "dtype"
    (tmp_path / "config.json").write_text(json.dumps({"text_config": {"torch_dtype": "float32"}}))
    cfg = read_model_config(str(tmp_path))
    assert (cfg.dtype.name, cfg.dtype_key) == ("F32", "text_config.torch_dtype")
    (tmp_path / "config.json").write_text(json.dumps({"torch_dtype": "auto"}))
    assert read_model_config(str(tmp_path)).dtype is None
    text = json.dumps({"torch_dtype": "float32", "dtype": "float32", "text_config": {"dtype": "x"}})
    from inspector.core.dtypes import DTYPES

    out = json.loads(config_with_dtype(text, DTYPES["BF16"]))
    assert out == {
        "torch_dtype": "bfloat16",
        "dtype": "bfloat16",
        "text_config": {"dtype": "bfloat16"},
    }


def test_target_config_and_the_mismatch_line(tmp_path, capsys):
    folder = tmp_path / "m"
    _tiny(folder)
    _set_config(folder, dtype="bfloat16")  # F32 weights under a bfloat16 config
    code, out, _ = _run(capsys, "check", folder, "--target", "config")
    assert code == 1
    assert "model.norm.weight: F32 (expected BF16) — kept in F32 on purpose?" in out
    assert "note: config.json dtype = bfloat16, but 21 of 21 float tensors are F32" in out
    assert "--keep-preset fp32-norms" in out
    code, out, _ = _run(capsys, "list", folder, "--target", "config")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("model.norm.weight"))
    assert row.endswith("F32 on purpose?")
    (folder / "config.json").unlink()
    code, _, err = _run(capsys, "check", folder, "--target", "config")
    assert code == 2 and "there is no config.json beside it" in err


@pytest.mark.parametrize(
    "src, dst",
    [
        (torch.float32, torch.bfloat16),
        (torch.float64, torch.float32),
        (torch.bfloat16, torch.float32),
    ],
)
def test_folder_cast_loads_with_from_pretrained(tmp_path, capsys, src, dst):
    folder, out = tmp_path / "src", tmp_path / "out"
    model = _tiny(folder, dtype=src, shard="20KB")
    (folder / "tokenizer.json").write_text('{"version": "1.0"}')
    (folder / "README.md").write_text("# tiny\n")
    (folder / "chat_template.jinja").write_text("{{ messages }}")
    target = {torch.bfloat16: "BF16", torch.float32: "F32"}[dst]
    code, _, err = _run(capsys, "cast", folder, "--target", target, "-o", out)
    assert code == 0, err
    for name in ("tokenizer.json", "README.md", "chat_template.jinja", "generation_config.json"):
        assert (out / name).read_bytes() == (folder / name).read_bytes(), name
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["dtype"] == {"BF16": "bfloat16", "F32": "float32"}[target]
    loaded = transformers.AutoModelForCausalLM.from_pretrained(out, dtype="auto")
    assert loaded.dtype == dst
    want = model.to(dst)
    for (name, p), (_, q) in zip(
        loaded.state_dict().items(), want.state_dict().items(), strict=True
    ):
        assert torch.equal(p, q), name  # the weights are exactly .to(dst)
    # the same outputs as transformers casting the source folder itself on load
    theirs = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=dst)
    ids = torch.tensor([[1, 5, 9, 3]])
    with torch.no_grad():
        assert torch.equal(loaded(ids).logits, theirs(ids).logits)


def test_keep_preset_keeps_norms(tmp_path, capsys):
    folder, out = tmp_path / "m", tmp_path / "out"
    _tiny(folder)
    code, _, err = _run(
        capsys, "cast", folder, "--target", "BF16", "--keep-preset", "fp32-norms", "-o", out
    )
    assert code == 0, err
    code, text, _ = _run(capsys, "list", out, "--json", "--target", "BF16")
    dtypes = {r["name"]: r["dtype"] for r in json.loads(text)["tensors"]}
    assert dtypes["model.norm.weight"] == "F32"
    assert dtypes["model.layers.0.input_layernorm.weight"] == "F32"
    assert dtypes["model.layers.0.mlp.gate_proj.weight"] == "BF16"


# -- lint -----------------------------------------------------------------------------------------
@pytest.fixture
def sharded(tmp_path):
    folder = tmp_path / "m"
    _tiny(folder, shard="8KB")
    return folder


def _codes(capsys, folder, *extra):
    code, out, err = _run(capsys, "lint", folder, "--json", *extra)
    assert code in (0, 1), err
    return code, {f["code"]: f for f in json.loads(out)["findings"]}


def _index(folder):
    return folder / "model.safetensors.index.json"


def test_lint_clean_folder(sharded, capsys):
    assert _codes(capsys, sharded) == (0, {})


def test_lint_index_that_forgot_a_tensor(sharded, capsys):
    index = json.loads(_index(sharded).read_text())
    shards = list(index["weight_map"].values())
    name = next(n for n, s in sorted(index["weight_map"].items()) if shards.count(s) > 1)
    del index["weight_map"][name]
    _index(sharded).write_text(json.dumps(index))
    code, found = _codes(capsys, sharded)
    assert code == 1 and found["tensor_not_in_index"]["tensors"] == [name]
    assert "does_not_open" in found  # the opener refuses it too: the line says why


def test_lint_index_naming_a_missing_tensor_and_wrong_total(sharded, capsys):
    index = json.loads(_index(sharded).read_text())
    shard = next(iter(index["weight_map"].values()))
    index["weight_map"]["ghost.weight"] = shard
    index["metadata"]["total_size"] = 123
    _index(sharded).write_text(json.dumps(index))
    _, found = _codes(capsys, sharded)
    assert found["index_names_missing_tensor"]["tensors"] == ["ghost.weight"]
    assert "says total_size 123" in found["total_size"]["message"]


def test_lint_stray_weights_and_pickle_twin(sharded, capsys):
    first = sorted(p.name for p in sharded.glob("model-*.safetensors"))[0]
    shutil.copy(sharded / first, sharded / "model.safetensors")
    torch.save({"w": torch.zeros(2)}, sharded / "pytorch_model.bin")
    _, found = _codes(capsys, sharded)
    assert found["stray_weights"]["files"] == ["model.safetensors"]
    assert found["pickle_twin"]["files"] == ["pytorch_model.bin"]


def test_lint_duplicates_doubled_keys_config_and_nan(tmp_path, capsys):
    from safetensors.torch import save_file

    folder = tmp_path / "m"
    folder.mkdir()
    emb = torch.randn(64, 16)
    bad = torch.randn(32, 16)
    bad[3, 3] = float("nan")
    save_file(
        {
            "embed.weight": emb,
            "lm_head.weight": emb.clone(),  # tied weights saved twice
            "encoder_blocks_blocks.0.weight": bad,
        },
        str(folder / "model.safetensors"),
    )
    (folder / "config.json").write_text(json.dumps({"torch_dtype": "bfloat16"}))
    _, found = _codes(capsys, folder, "--stats")
    assert found["duplicate_tensor"]["tensors"] == ["embed.weight", "lm_head.weight"]
    assert "4,096 bytes stored again" in found["duplicate_tensor"]["message"]
    assert found["doubled_key"]["tensors"] == ["encoder_blocks_blocks.0.weight"]
    assert found["config_dtype"]["files"] == ["config.json"]
    assert found["nan_inf"]["tensors"] == ["encoder_blocks_blocks.0.weight"]


def test_lint_variant_names_and_unreadable(tmp_path, capsys):
    folder = tmp_path / "v"
    _tiny(folder, shard="8KB")
    for p in folder.glob("model-*.safetensors"):
        p.rename(folder / p.name.replace("model-", "model.fp16-"))
    index = json.loads(_index(folder).read_text())
    index["weight_map"] = {
        k: v.replace("model-", "model.fp16-") for k, v in index["weight_map"].items()
    }
    (folder / "model.safetensors.index.fp16.json").write_text(json.dumps(index))
    _index(folder).unlink()
    assert _codes(capsys, folder) == (0, {})
    code, _, err = _run(capsys, "lint", tmp_path / "nothing-here")
    assert code == 2 and err.count("\n") == 1


def test_lint_single_file_variants_side_by_side(tmp_path, capsys):
    from safetensors.torch import save_file

    folder = tmp_path / "m"
    folder.mkdir()
    w = torch.randn(32, 16)
    save_file({"w": w}, str(folder / "model.safetensors"))
    save_file({"w": w.half()}, str(folder / "model.fp16.safetensors"))
    assert _codes(capsys, folder) == (0, {})
    save_file({"w": w, "w_blocks_blocks": w.clone()}, str(folder / "model.fp16.safetensors"))
    code, found = _codes(capsys, folder)
    assert code == 1 and set(found) == {"doubled_key", "duplicate_tensor"}


def test_tied_f16_variant_folder_is_clean_and_casts(tmp_path, capsys):
    folder, out = tmp_path / "m", tmp_path / "out"
    model = _tiny(folder, dtype=torch.float16, tie=True)
    model.save_pretrained(folder, variant="fp16")  # model.fp16.safetensors beside model.safetensors
    assert (folder / "model.fp16.safetensors").exists()
    assert _codes(capsys, folder) == (0, {})
    code, _, err = _run(capsys, "cast", folder / "model.safetensors", "--target", "F32", "-o", out)
    assert code == 0, err  # a file in, a file out (the folder's variants are not guessed at)
    loaded = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    from safetensors.torch import load_file

    for name, t in load_file(out).items():
        assert torch.equal(t, loaded.state_dict()[name]), name


def test_lint_does_not_wait_on_a_fifo_named_like_an_index(tmp_path):
    """A named pipe called model.safetensors.index.json: lint must refuse it, not block on it.
    Run in a child process with a time bound (before the fix it hung)."""
    import os
    import subprocess
    import sys

    import numpy as np
    from safetensors.numpy import save_file

    folder = tmp_path / "m"
    folder.mkdir()
    save_file({"w": np.zeros(2, np.float32)}, str(folder / "model.safetensors"))
    os.mkfifo(folder / "model.safetensors.index.json")
    proc = subprocess.run(
        [sys.executable, "-m", "inspector", "lint", str(folder), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode in (1, 2), proc.stderr
    assert proc.stderr.count("\n") <= 1


def test_folder_cast_with_odd_configs(tmp_path, capsys):
    """A config that is a list, or nested 100,000 deep: copied as it is, never a traceback."""
    import numpy as np
    from safetensors.numpy import save_file

    for name, text in (("list", "[1, 2]"), ("deep", "[" * 100_000 + "]" * 100_000)):
        folder = tmp_path / name
        folder.mkdir()
        save_file({"w": np.zeros(2, np.float64)}, str(folder / "model.safetensors"))
        (folder / "config.json").write_text(text)
        code, _, err = _run(
            capsys, "cast", folder, "--target", "F32", "-o", tmp_path / f"{name}-out"
        )
        assert code == 0, err
        assert (tmp_path / f"{name}-out" / "config.json").read_text() == text


@pytest.mark.parametrize("dtype_arg", [None, "auto"])
def test_what_lint_says_transformers_does_is_what_transformers_does(tmp_path, capsys, dtype_arg):
    """The claim in lint's config_dtype (and the window's note) is tested against transformers:
    F32 weights under a bfloat16 config load as bfloat16, by default and with dtype="auto"."""
    folder = tmp_path / "m"
    _tiny(folder, dtype=torch.float32)
    _set_config(folder, dtype="bfloat16", torch_dtype="bfloat16")
    kw = {} if dtype_arg is None else {"dtype": dtype_arg}
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, **kw)
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}
    code, out, _ = _run(capsys, "lint", folder, "--json")
    (finding,) = [f for f in json.loads(out)["findings"] if f["code"] == "config_dtype"]
    assert "from_pretrained loads them as BF16" in finding["message"]
    assert len(finding["tensors"]) == 16  # every one (norms are F32 on purpose)


def test_lint_text_counts_agree_and_say_1_finding(tmp_path, capsys):
    folder = tmp_path / "m"
    _tiny(folder, dtype=torch.float32)
    _set_config(folder, dtype="bfloat16", torch_dtype="bfloat16")
    code, out, _ = _run(capsys, "lint", folder)
    assert code == 1
    assert "16 of 21 float tensors are F32" in out
    assert "and 11 more" in out  # 5 shown of the 16 the finding counts
    assert out.rstrip().endswith("1 finding in m")


def test_a_trainer_output_folder_opens_its_weights_and_lint_names_training_args(tmp_path, capsys):
    """Trainer.save_model writes pytorch_model.bin and training_args.bin: the folder was refused
    ("2 PyTorch pickle files but no index.json") though transformers loads it by name."""
    folder = tmp_path / "run"
    _tiny(folder)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder)
    (folder / "model.safetensors").unlink()
    model.save_pretrained(folder, safe_serialization=False)
    # what torch.save(TrainingArguments(...)) pickles: the class by name, NEWOBJ, its __dict__
    (folder / "training_args.bin").write_bytes(
        b"\x80\x02ctransformers.training_args\nTrainingArguments\n)\x81}X\x0a\x00\x00\x00"
        b"output_dirX\x03\x00\x00\x00runsb."
    )
    code, out, err = _run(capsys, "list", folder, "--json")
    assert code == 0, err
    assert len(json.loads(out)["tensors"]) == len(model.state_dict())
    code, out, _ = _run(capsys, "lint", folder, "--json")
    (finding,) = [f for f in json.loads(out)["findings"] if f["code"] == "pickle_imports"]
    assert finding["files"] == ["training_args.bin"]
    assert "transformers.training_args.TrainingArguments" in finding["message"]


def test_tied_weights_of_a_pickle_are_not_reported_as_stored_twice(tmp_path, capsys):
    """A .bin whose embedding and decoder share one storage stores it once: lint said
    "... bytes stored again" for BERT-style tied weights."""
    folder = tmp_path / "m"
    folder.mkdir()
    emb = torch.randn(64, 32)
    torch.save({"embeddings.weight": emb, "decoder.weight": emb}, folder / "pytorch_model.bin")
    code, out, _ = _run(capsys, "lint", folder, "--json")
    assert not [f for f in json.loads(out)["findings"] if f["code"] == "duplicate_tensor"]
    torch.save(
        {"embeddings.weight": emb, "decoder.weight": emb.clone()}, folder / "pytorch_model.bin"
    )
    code, out, _ = _run(capsys, "lint", folder, "--json")
    (dup,) = [f for f in json.loads(out)["findings"] if f["code"] == "duplicate_tensor"]
    assert "8,192 bytes stored again" in dup["message"]
