"""Every line the commands print, exactly: headers and column widths, the words of each status,
counts and plurals, where a list is cut short. The mutation run of inspector/cli/ (round 3)
found most of them checked only as substrings, or not at all."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch

from inspector.cli import main
from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays
from tests.burnpack_files import plain, write_burnpack
from tests.gguf_files import Q, permute, write_gguf

F16, F32, F64, BF16, I64 = (DTYPES[n] for n in ("F16", "F32", "F64", "BF16", "I64"))
A28, N29 = "a" * 28, "n" * 29  # one as wide as list --stats' name column, one wider


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def lines_of(capsys, *argv, code=0) -> list[str]:
    got, out, err = run(capsys, *argv)
    assert (got, err) == (code, ""), err
    return out.splitlines()


@pytest.fixture
def mixed(tmp_path) -> Path:
    p = tmp_path / "m.safetensors"
    save_arrays(
        p,
        [
            ("w", F64, np.array([1.0, -2.0, 0.5])),
            ("ids", I64, np.arange(3)),
            ("b", F32, np.zeros(2, np.float32)),
            ("e", F32, np.zeros(0, np.float32)),
            (A28, F64, np.ones(2)),
            (N29, F16, np.ones(2, np.float16)),
        ],
    )
    return p


# -- list -----------------------------------------------------------------------------------------


def test_list_prints_each_column_and_status(mixed, capsys):
    assert lines_of(capsys, "list", mixed) == [
        "name                           dtype    shape                      size  status",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaa   F64      [2]                        16 B  ≠ F32",
        "nnnnnnnnnnnnnnnnnnnnnnnnnnnnn  F16      [2]                         4 B  ≠ F32",
        "w                              F64      [3]                        24 B  ≠ F32",
        "ids                            I64      [3]                        24 B  kept (not a float)",
        "b                              F32      [2]                         8 B",
        "e                              F32      [0]                         0 B",
        "3 of 6 tensors differ from F32 · 12 params · 76 B · F64×2 F16×1 I64×1",
    ]


def test_list_stats_puts_a_name_wider_than_28_on_its_own_line(mixed, capsys):
    """28 characters still fit the name column; the 29th moves it above its numbers. An empty
    tensor has no min/max/mean/std: "-"."""
    assert lines_of(capsys, "list", mixed, "--stats") == [
        "name                          dtype    shape           status            min       max"
        "      mean       std   nan   inf",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaa  F64      [2]             ≠ F32               1         1"
        "         1         0     0     0",
        "nnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
        "                              F16      [2]             ≠ F32               1         1"
        "         1         0     0     0",
        "w                             F64      [3]             ≠ F32              -2         1"
        "    -0.167      1.31     0     0",
        "ids                           I64      [3]             not a float         0         2"
        "         1     0.816     0     0",
        "b                             F32      [2]                                 0         0"
        "         0         0     0     0",
        "e                             F32      [0]                                 -         -"
        "         -         -     0     0",
        "3 of 6 tensors differ from F32 · 12 params · 76 B · F64×2 F16×1 I64×1",
    ]


def test_list_name_column_is_4_to_60_wide(tmp_path, capsys):
    short, long = tmp_path / "s.safetensors", tmp_path / "l.safetensors"
    save_arrays(short, [("w", F32, np.ones(2, np.float32))])
    save_arrays(long, [("x" * 70, F32, np.ones(2, np.float32))])
    assert lines_of(capsys, "list", short)[:2] == [
        "name  dtype    shape                      size  status",
        "w     F32      [2]                         8 B",
    ]
    assert lines_of(capsys, "list", long)[:2] == [
        f"{'name':<60}  dtype    shape                      size  status",
        f"{'x' * 70}  F32      [2]                         8 B",
    ]


def test_list_names_a_pickles_values_and_its_top_level_one(tmp_path, capsys):
    """A pickle's non-tensor leaves under their names; a list's items by index."""
    torch.save({"w": torch.ones(2), "epoch": 3, "lr": 0.5}, tmp_path / "d.pt")
    torch.save([torch.ones(2), 7], tmp_path / "l.pt")
    torch.save({"w": torch.ones(2), "": 3}, tmp_path / "e.pt")
    assert lines_of(capsys, "list", tmp_path / "d.pt")[-3:] == [
        "2 values that are not tensors (listed, not written by cast):",
        "  epoch = 3",
        "  lr = 0.5",
    ]
    assert lines_of(capsys, "list", tmp_path / "l.pt")[-2:] == [
        "1 value that is not a tensor (listed, not written by cast):",
        "  1 = 7",
    ]
    assert lines_of(capsys, "list", tmp_path / "e.pt")[-1] == "  (top level) = 3"


# -- check, and a model folder's config.json ------------------------------------------------------


def _llama_folder(folder: Path, n_plain: int = 1) -> Path:
    """A norm kept in F32 on purpose, ``n_plain`` F32 weights, a BF16 embedding; config: BF16."""
    folder.mkdir()
    save_arrays(
        folder / "model.safetensors",
        [
            ("model.norm.weight", F32, np.ones(4, np.float32)),
            *(
                (f"model.layers.{i}.mlp.up_proj.weight", F32, np.ones((2, 4), np.float32))
                for i in range(n_plain)
            ),
            ("model.embed_tokens.weight", BF16, np.ones((3, 4), ml_dtypes.bfloat16)),
        ],
    )
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}
    (folder / "config.json").write_text(json.dumps({**config, "torch_dtype": "bfloat16"}))
    return folder


def test_check_names_each_differing_tensor_the_config_and_the_fix(mixed, tmp_path, capsys):
    assert lines_of(capsys, "check", mixed, code=1) == [
        "w: F64 (expected F32)",
        f"{A28}: F64 (expected F32)",
        f"{N29}: F16 (expected F32)",
        "3 of 6 tensors differ from F32 · 12 params · 76 B · F64×2 F16×1 I64×1",
        f"fix: checkpoint-inspector cast {mixed} --target F32 -o OUT",
    ]
    m = _llama_folder(tmp_path / "m")
    assert lines_of(capsys, "check", m, code=1) == [
        "model.norm.weight: F32 (expected BF16) — kept in F32 on purpose? (norm, inv_freq or router)",
        "model.layers.0.mlp.up_proj.weight: F32 (expected BF16)",
        "2 of 3 tensors differ from BF16 · 24 params · 72 B · F32×2",
        "note: config.json torch_dtype = bfloat16, but 2 of 3 float tensors are F32",
        f"fix: checkpoint-inspector cast {m} --target BF16 --keep-preset fp32-norms -o OUT",
    ]
    assert lines_of(capsys, "check", m, "--target", "F16", code=1)[-2:] == [
        "note: config.json torch_dtype = bfloat16, but 2 of 3 float tensors are F32 "
        "(checked against F16)",
        f"fix: checkpoint-inspector cast {m} --target F16 --keep-preset fp32-norms -o OUT",
    ]


def test_check_proposes_the_preset_only_for_a_tensor_kept_on_purpose(tmp_path, capsys):
    m = _llama_folder(tmp_path / "m")
    save_arrays(
        m / "model.safetensors",
        [
            ("model.layers.0.mlp.up_proj.weight", F32, np.ones((2, 4), np.float32)),
            ("model.embed_tokens.weight", BF16, np.ones((3, 4), ml_dtypes.bfloat16)),
        ],
    )
    assert lines_of(capsys, "check", m, code=1) == [
        "model.layers.0.mlp.up_proj.weight: F32 (expected BF16)",
        "1 of 2 tensors differ from BF16 · 20 params · 56 B · F32×1",
        "note: config.json torch_dtype = bfloat16, but 1 of 2 float tensors is F32",
        f"fix: checkpoint-inspector cast {m} --target BF16 -o OUT",
    ]


def test_list_marks_a_tensor_kept_in_f32_on_purpose(tmp_path, capsys):
    m = _llama_folder(tmp_path / "m")
    assert lines_of(capsys, "list", m) == [
        "name                               dtype    shape                      size  status",
        "model.layers.0.mlp.up_proj.weight  F32      [2, 4]                     32 B  ≠ BF16",
        "model.norm.weight                  F32      [4]                        16 B  F32 on purpose?",
        "model.embed_tokens.weight          BF16     [3, 4]                     24 B",
        "2 of 3 tensors differ from BF16 · 24 params · 72 B · F32×2",
    ]


def test_target_config_without_a_config_names_the_checkpoint(mixed, capsys):
    code, out, err = run(capsys, "list", mixed, "--target", "config")
    assert (code, out) == (2, "")
    assert err == (
        f"checkpoint-inspector: error: {mixed}: --target config: there is no config.json "
        "beside it\n"
    )


def test_an_unreadable_config_is_the_note_of_check(tmp_path, capsys):
    m = _llama_folder(tmp_path / "m")
    (m / "config.json").write_text("{not json")
    lines = lines_of(capsys, "check", m, "--target", "BF16", code=1)
    assert lines[-2].startswith(f"note: {m / 'config.json'}: ") and len(lines) == 5


# -- lint -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [5, 6])
def test_lint_names_five_tensors_then_how_many_more(tmp_path, capsys, n):
    m = tmp_path / "m"
    m.mkdir()
    save_arrays(m / "model.safetensors", [(f"l{i}", F32, np.ones(2, np.float32)) for i in range(n)])
    (m / "config.json").write_text(json.dumps({"torch_dtype": "bfloat16"}))
    (m / "pytorch_model.bin").write_bytes(b"x")
    more = " and 1 more" if n == 6 else ""
    assert lines_of(capsys, "lint", m, code=1) == [
        "warning pickle_twin: pytorch_model.bin beside model.safetensors: a pickle copy of the "
        "weights (bytes downloaded twice)",
        "        files: pytorch_model.bin, model.safetensors",
        f"warning config_dtype: config.json torch_dtype = bfloat16, but {n} of {n} float tensors "
        "are F32: transformers' from_pretrained loads them as BF16 (the config wins, a silent "
        "cast), while burn and safe_open keep F32 (the file is not what the model uses; burn's "
        "first BF16 matmul panics on the mismatch)",
        f"        tensors: l0, l1, l2, l3, l4{more}",
        "        files: config.json",
        "2 findings in m",
    ]


def test_lint_of_a_clean_folder_names_it_as_typed(tmp_path, capsys):
    """The folder's own name, a trailing space kept (only a separator is cut)."""
    m = tmp_path / "m "
    m.mkdir()
    save_arrays(m / "model.safetensors", [("w", F32, np.ones(2, np.float32))])
    assert lines_of(capsys, "lint", f"{m}/") == ["m : no findings"]


# -- diff -----------------------------------------------------------------------------------------


def test_diff_names_each_difference_and_the_counts(mixed, tmp_path, capsys):
    other = tmp_path / "o.safetensors"
    save_arrays(
        other,
        [
            ("w", F32, np.array([1.0, -2.0, 0.75], np.float32)),
            ("ids", I64, np.arange(3)),
            ("b", F32, np.zeros(3, np.float32)),
            ("x", F32, np.ones(1, np.float32)),
        ],
    )
    rows = [
        "shape_mismatch  b  [2] vs [3]",
        "only_a          e",
        f"only_a          {A28}",
        f"only_a          {N29}",
        "only_b          x",
    ]
    assert lines_of(capsys, "diff", mixed, other, code=1) == [
        "differ          w  max abs 0.25, max rel 0.333 (F64 vs F32)",
        *rows,
        "different: 1 differ, 1 equal, 1 shape_mismatch, 3 only_a, 1 only_b",
    ]
    assert lines_of(capsys, "diff", mixed, other, "--atol", "0.5", code=1) == [
        "within_atol     w  max abs 0.25, max rel 0.333 (F64 vs F32)",
        *rows,
        "different within atol 0.5: 1 within_atol, 1 equal, 1 shape_mismatch, 3 only_a, 1 only_b",
    ]
    assert lines_of(capsys, "diff", mixed, mixed, "--atol", "0.5") == [
        "equal within atol 0.5: 6 equal"
    ]


def test_diff_of_a_burnpack_and_safetensors_either_way(tmp_path, capsys):
    st = tmp_path / "m.safetensors"
    save_arrays(st, [("fc.weight", F32, np.ones((2, 3), np.float32))])
    bpk = write_burnpack(tmp_path / "m.bpk", [plain("fc.weight", np.full((2, 3), 2.0))])
    assert lines_of(capsys, "diff", st, bpk, code=1) == [
        "B has burn's names and layouts, A PyTorch's: compared as PyTorchToBurnAdapter maps "
        "them (norms' gamma/beta as weight/bias, Linear weights transposed)",
        "differ          fc.weight  max abs 1, max rel 0.5 (F32 vs F64)",
        "different: 1 differ",
    ]
    assert lines_of(capsys, "diff", bpk, st, code=1)[0].startswith("A has burn's names and")


def _gguf_pair(tmp_path) -> tuple[Path, Path]:
    """A llama GGUF with a Q8_0 weight and the HF safetensors it was converted from."""
    g = torch.Generator().manual_seed(0)
    hf = {
        "model.layers.0.self_attn.q_proj.weight": torch.randn(64, 64, generator=g),
        "model.norm.weight": torch.randn(64, generator=g),
    }
    save_arrays(tmp_path / "hf.safetensors", [(k, F32, v.numpy()) for k, v in hf.items()])
    q = permute(hf["model.layers.0.self_attn.q_proj.weight"], 2, 2).numpy()
    path = write_gguf(
        tmp_path / "m.gguf",
        {
            "blk.0.attn_q.weight": (np.ascontiguousarray(q), Q.Q8_0),
            "output_norm.weight": (hf["model.norm.weight"].numpy(), None),
        },
        kv={"llama.attention.head_count": 2, "llama.attention.head_count_kv": 2},
    )
    return path, tmp_path / "hf.safetensors"


def test_diff_of_a_gguf_says_which_side_and_the_hf_names(tmp_path, capsys):
    gguf, hf = _gguf_pair(tmp_path)
    said = (
        " is GGUF: its tensors are compared under the HF names they were converted from, with "
        "the Q/K rows llama.cpp's converter interleaves (llama family) put back in order"
    )
    a = lines_of(capsys, "diff", gguf, hf, code=1)
    b = lines_of(capsys, "diff", hf, gguf, code=1)
    assert (a[0], b[0]) == ("A" + said, "B" + said)
    assert a[1].startswith("differ          blk.0.attn_q.weight  max abs ")
    assert a[1].endswith(" dB (gguf) [B: model.layers.0.self_attn.q_proj.weight]")
    assert ", rel Frobenius 0.00" in a[1] and ", SQNR 4" in a[1]
    assert b[1].endswith(" dB (gguf) [B: blk.0.attn_q.weight]")
    assert (a[2], b[2]) == ("different: 1 differ, 1 equal", "different: 1 differ, 1 equal")
    code, out, _ = run(capsys, "diff", gguf, hf, "--json")
    assert code == 1 and not out.startswith("A is GGUF") and json.loads(out)["tensors"]


# -- scan -----------------------------------------------------------------------------------------


def test_scan_of_a_folder_lists_each_file_and_sums_up(tmp_path, capsys):
    s = tmp_path / "s"
    (s / "sub").mkdir(parents=True)
    torch.save({"w": torch.ones(2)}, s / "clean.pt")
    torch.save({"w": torch.ones(2), "args": argparse.Namespace(lr=1)}, s / "sub" / "bad.pt")
    (s / "README.md").write_text("hi")
    (s / "tokenizer.json").write_text("{}")
    save_arrays(s / "w.safetensors", [("w", F32, np.ones(2, np.float32))])
    index = {"weight_map": {"w": "../other.safetensors"}}
    (s / "model.safetensors.index.json").write_text(json.dumps(index))
    sub_index = {"weight_map": {"w": "../../other.safetensors"}}
    (s / "sub" / "model.safetensors.index.json").write_text(json.dumps(sub_index))
    (s / "broken.pt").write_bytes(b"\x80\x02garbage")
    (s / "evil.pkl").write_bytes(b"\x80\x02cos\nsystem\nq\x00.")
    rebuilds = [
        "  torch._utils._rebuild_tensor_v2  tensor      ×1",
        "  torch.FloatStorage               tensor      ×1",
        "  collections.OrderedDict          container   ×1",
    ]
    lines = lines_of(capsys, "scan", s, code=1)
    # the resolved path of each index's shard is clipped to 80 characters
    said = "), outside the scanned folder: a loader would read it from there; not scanned"
    assert [(line.split(" (")[0], line.endswith(said)) for line in lines if "FINDING" in line] == [
        ("  FINDING: its weight_map names '../other.safetensors'", True),
        ("  FINDING: its weight_map names '../../other.safetensors'", True),
    ]
    assert [line for line in lines if "FINDING" not in line] == [
        "broken.pt  (pickle)",
        "  unreadable: pickle ends in the middle of a text argument (truncated or corrupt)",
        "clean.pt  (torch zip)",
        *rebuilds,
        "evil.pkl  (pickle)",
        "  os.system   REFUSED     ×1",
        "model.safetensors.index.json  (index)",
        "w.safetensors  (safetensors)",
        "  data only: no code",
        "sub/bad.pt  (torch zip)",
        *rebuilds,
        "  argparse.Namespace               REFUSED     ×1",
        "sub/model.safetensors.index.json  (index)",
        "2 other files: not checkpoints, nothing torch would run",
        "2 findings: torch would read these files otherwise than this tool, or run code through "
        "them; nothing was executed",
        "2 imports outside the allowlist: argparse.Namespace, os.system; nothing was executed",
    ]
    code, out, _ = run(capsys, "scan", s, "--json")
    doc = json.loads(out)
    assert code == 1 and doc["status"] == "refused"
    files = {Path(f["path"]).name: f for f in doc["files"]}
    assert files["bad.pt"]["imports"][-1] == {
        "name": "argparse.Namespace",
        "verdict": "refused",
        "count": 1,
    }
    assert files["broken.pt"] == {
        "path": str(s / "broken.pt"),
        "format": "pickle",
        "status": "unreadable",
        "error": "pickle ends in the middle of a text argument (truncated or corrupt)",
        "findings": [],
        "imports": [],
    }
    assert files["model.safetensors.index.json"]["findings"][0].startswith("its weight_map")


def test_scan_of_one_file_names_it_and_says_what_it_is(tmp_path, capsys):
    torch.save({"w": torch.ones(2)}, tmp_path / "clean.pt")
    save_arrays(tmp_path / "w.safetensors", [("w", F32, np.ones(2, np.float32))])
    (tmp_path / "evil.pkl").write_bytes(b"\x80\x02cos\nsystem\nq\x00.")  # a 9-character import
    (tmp_path / "empty.pkl").write_bytes(b"\x80\x02}q\x00.")  # an empty dict: no import at all
    assert lines_of(capsys, "scan", tmp_path / "clean.pt") == [
        "clean.pt  (torch zip)",
        "  torch._utils._rebuild_tensor_v2  tensor      ×1",
        "  torch.FloatStorage               tensor      ×1",
        "  collections.OrderedDict          container   ×1",
        "only tensor rebuilds and plain containers: safe to read",
    ]
    assert lines_of(capsys, "scan", tmp_path / "w.safetensors") == [
        "w.safetensors  (safetensors)",
        "  data only: no code",
        "no pickle: nothing in it can run code",
    ]
    assert lines_of(capsys, "scan", tmp_path / "evil.pkl", code=1) == [
        "evil.pkl  (pickle)",
        "  os.system   REFUSED     ×1",
        "1 import outside the allowlist: os.system; nothing was executed",
    ]
    assert lines_of(capsys, "scan", tmp_path / "empty.pkl") == [
        "empty.pkl  (pickle)",
        "  imports nothing",
        "only tensor rebuilds and plain containers: safe to read",
    ]


def test_scan_of_an_unreadable_file_exits_2(tmp_path, capsys):
    (tmp_path / "README.md").write_text("hi")
    assert lines_of(capsys, "scan", tmp_path / "README.md", code=2) == [
        "README.md  (unknown)",
        "  unreadable: file is too short to be safetensors (2 bytes; needs at least 8 for the "
        "header length)",
    ]


# -- cast -----------------------------------------------------------------------------------------


def test_cast_says_what_it_wrote_and_where_the_report_is(mixed, tmp_path, capsys):
    out, report = tmp_path / "o.safetensors", tmp_path / "r.json"
    assert lines_of(capsys, "cast", mixed, "--target", "F16", "-o", out, "--report", report) == [
        f"wrote {out}: 4 of 6 tensors cast to F16, 4 of them lossless; report in {report}"
    ]
    assert lines_of(capsys, "cast", mixed, "--target", "BF16", "-o", out) == [
        f"wrote {out}: 5 of 6 tensors cast to BF16, 5 of them lossless"
    ]


def test_cast_names_overflow_underflow_and_the_typical_error(tmp_path, capsys):
    """The three worst tensors of each, then how many more; underflow alone still said; the
    typical error as one number when the tensors' means round alike."""
    g = np.random.default_rng(0)
    src = tmp_path / "r.safetensors"
    save_arrays(
        src,
        [
            (
                f"t{i}",
                F32,
                np.array(
                    [*g.standard_normal(100), 1e-9 if i < 2 else 1.0, 1e6 if i else 1.0], np.float32
                ),
            )
            for i in range(5)
        ],
    )
    out = tmp_path / "o.safetensors"
    assert lines_of(capsys, "cast", src, "--target", "F16", "-o", out)[1:] == [
        "  4 values overflowed to ±inf or were saturated: t4 (1), t3 (1), t2 (1) and 1 more tensor",
        "  2 non-zero values became zero: t1 (1), t0 (1)",
        "  relative error per tensor: typical (mean) 0.00017 to 0.00018, largest 1 "
        "(1 in 2 tensors: a value became zero)",
    ]
    save_arrays(src, [("u", F32, np.array([1e-9, 1.0], np.float32))])
    assert lines_of(capsys, "cast", src, "--target", "F16", "-o", out)[1:] == [
        "  1 non-zero value became zero: u (1)"
    ]
    save_arrays(src, [("n", F32, g.standard_normal(1000).astype(np.float32))])
    assert lines_of(capsys, "cast", src, "--target", "F16", "-o", out)[1:] == [
        "  relative error per tensor: typical (mean) 0.00018, largest 0.000481"
    ]


@pytest.mark.parametrize("n", [10, 11])
def test_cast_names_ten_tensors_left_out_then_how_many_more(tmp_path, capsys, n):
    torch.save(
        {
            **{f"c{i:02d}": torch.ones(2, dtype=torch.complex128) for i in range(n)},
            "w": torch.ones(2, dtype=torch.float64),
        },
        tmp_path / "c.pt",
    )
    out = tmp_path / "c.safetensors"
    why = "complex128 tensor [2]: safetensors has no complex128 dtype; left out of cast"
    assert lines_of(capsys, "cast", tmp_path / "c.pt", "--target", "F16", "-o", out) == [
        f"wrote {out}: 1 of 1 tensor cast to F16, 1 of them lossless",
        f"  {n} tensors left out (not written):",
        *(f"    c{i:02d}: {why}" for i in range(10)),
        *(["    and 1 more"] if n == 11 else []),
    ]


def test_cast_of_a_training_checkpoint_says_what_it_left_out_on_stdout(tmp_path, capsys):
    from tests.cli.test_training_checkpoints import _lightning

    _lightning(tmp_path / "last.ckpt")
    out = tmp_path / "o.safetensors"
    lines = lines_of(capsys, "cast", tmp_path / "last.ckpt", "--target", "F16", "-o", out)
    assert lines[:2] == [
        f"wrote {out}: 4 of 4 tensors cast to F16, 0 of them lossless",
        "Lightning checkpoint: the model's 4 tensors (prefix state_dict. taken off); 12 other "
        "tensors and 21 values (optimizer state, counters, settings) left out; --keep-all writes "
        "everything",
    ]
    lines = lines_of(
        capsys, "cast", tmp_path / "last.ckpt", "--keep-all", "--target", "F16", "-o", out
    )
    assert lines[0] == f"wrote {out}: 16 of 16 tensors cast to F16, 4 of them lossless"


def test_cast_keeps_the_preset_only_when_asked(tmp_path, capsys):
    m = _llama_folder(tmp_path / "m")
    assert lines_of(capsys, "cast", m, "-o", tmp_path / "a") == [
        f"wrote {tmp_path / 'a'}: 2 of 3 tensors cast to BF16, 2 of them lossless"
    ]
    assert lines_of(capsys, "cast", m, "--keep-preset", "fp32-norms", "-o", tmp_path / "b") == [
        f"wrote {tmp_path / 'b'}: 1 of 3 tensors cast to BF16, 1 of them lossless"
    ]


def test_cast_into_burnpack_says_how_burn_loads_it_by_the_sources_layout(tmp_path, capsys):
    """A PyTorch-layout source (safetensors, or a Burnpack this tool wrote from one, by its
    metadata) needs burn's PyTorch adapter; a Burnpack without that metadata does not."""
    st = tmp_path / "s.safetensors"
    save_arrays(st, [("fc.weight", F32, np.ones((2, 3), np.float32))])
    load = 'load it in burn with: BurnpackStore::from_file("{}").with_from_adapter({})'
    pytorch = "its names and layouts are still PyTorch's; "
    chain = "PyTorchToBurnAdapter.chain(FloatCastAdapter::to(DType::F16))"
    assert lines_of(capsys, "cast", st, "--target", "F16", "-o", tmp_path / "a.bpk")[1] == (
        pytorch + load.format("a.bpk", chain)
    )
    assert lines_of(
        capsys, "cast", tmp_path / "a.bpk", "--target", "F32", "-o", tmp_path / "b.bpk"
    )[1] == pytorch + load.format(
        "b.bpk", "PyTorchToBurnAdapter.chain(FloatCastAdapter::to(DType::F32))"
    )
    bare = write_burnpack(tmp_path / "c.bpk", [plain("fc.weight", np.ones((2, 3)))])
    assert lines_of(capsys, "cast", bare, "--target", "F16", "-o", tmp_path / "d.bpk")[1] == (
        load.format("d.bpk", "FloatCastAdapter::to(DType::F16)")
    )


def _ctrl_c_at_commit(monkeypatch, after: bool) -> None:
    """Ctrl-C pressed just before (or just after) an output is renamed into place."""
    from inspector.core.save.writer import AtomicWriter

    commit = AtomicWriter.commit

    def pressed(self):
        if after:
            commit(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(AtomicWriter, "commit", pressed)


@pytest.mark.parametrize("after", [False, True])
def test_ctrl_c_over_an_existing_output_says_whether_it_was_replaced(
    mixed, tmp_path, capsys, monkeypatch, after
):
    out = tmp_path / "o.safetensors"
    out.write_bytes(b"the previous output")
    _ctrl_c_at_commit(monkeypatch, after)
    code, stdout, err = run(capsys, "cast", mixed, "--target", "F16", "-o", out)
    assert (code, stdout) == (130, "")
    said = (
        f"interrupted after {out} was written; it is complete"
        if after
        else ("interrupted; nothing was written")
    )
    assert err == f"checkpoint-inspector: error: {said}\n"
    assert (out.read_bytes() == b"the previous output") is not after


# -- quantized checkpoints ------------------------------------------------------------------------


def test_check_of_quantized_checkpoints_says_what_a_cast_would_do(tmp_path, capsys):
    from tests.quant_folders import deepseek_folder, folder, gptq_tensors

    deepseek_folder(tmp_path / "ds")
    assert lines_of(capsys, "check", tmp_path / "ds") == [
        "ok: all 2 float tensors are BF16 (0 of 3 tensors differ from BF16 · 1 quantized (FP8 "
        "block-scaled (quant_method fp8)) · 67.8 k params · 68.5 KiB)",
        "FP8 block-scaled (quant_method fp8): 1 quantized weight; a cast dequantizes it (writes "
        "a plain model, quantization_config removed)",
    ]
    g = np.random.default_rng(0).standard_normal((2, 64, 64)).astype(np.float32)
    gguf = write_gguf(
        tmp_path / "m.gguf",
        {"blk.0.attn_q.weight": (g[0], Q.Q8_0), "blk.0.attn_k.weight": (g[1], Q.Q8_0)},
    )
    assert lines_of(capsys, "check", gguf) == [
        "ok: no float tensor besides the quantized weights (0 of 2 tensors differ from F32 · 2 "
        "quantized (GGUF "
        "Q8_0×2) · 8.2 k params · 8.5 KiB)",
        "GGUF Q8_0×2: 2 quantized weights; a cast dequantizes them (writes safetensors under the "
        "HF names where the architecture is known)",
    ]
    qc = {"quant_method": "awq", "bits": 4, "group_size": 32, "version": "gemv"}
    folder(tmp_path / "awq", gptq_tensors()[:-1], qc)
    assert lines_of(capsys, "check", tmp_path / "awq")[1] == (
        "AWQ: 1 quantized weight; a cast is refused: AWQ version 'gemv' packs its weights in a "
        "layout not read yet; a cast would write its codes as values, so it is refused"
    )


def test_list_stats_of_a_quantized_weight_gives_its_dequantized_values(tmp_path, capsys):
    """Its row in the columns of every row (it had the plain list's shape and size columns, and
    its numbers on a line of their own in no column), then how it is stored and its stored
    tensors under it; a long name on a line of its own, as every row's."""
    from tests.quant_folders import deepseek_folder

    deepseek_folder(tmp_path / "ds")
    w = "model.layers.0.mlp.up_proj.weight"
    assert lines_of(capsys, "list", tmp_path / "ds", "--stats") == [
        "name                          dtype    shape           status            min       max"
        "      mean       std   nan   inf",
        w,
        "                              F8_E4M3  [256, 256]      quantized     -0.0899    0.0946"
        "  5.14e-05      0.02     0     0",
        "  quantized:                  F8_E4M3, block 128×128, scales F32",
        "  storage:                    codes used 220 of 254 · saturated 6 · scales 0.0001796 … "
        "0.0002112 · 0 bad",
        f"  └ {w}",
        "                              F8_E4M3  [256, 256]",
        f"  └ {w}_scale_inv",
        "                              F32      [2, 2]",
        "lm_head.weight                BF16     [8, 256]                      -0.0781    0.0613"
        " -0.000547      0.02     0     0",
        "model.norm.weight             BF16     [256]                               1         1"
        "         1         0     0     0",
        "0 of 3 tensors differ from BF16 · 1 quantized (FP8 block-scaled (quant_method fp8)) · "
        "67.8 k params · 68.5 KiB",
    ]


def test_list_puts_a_quantized_weights_stored_tensors_in_the_name_column(tmp_path, capsys):
    """The stored tensors' rows are indented by four: the name column is as wide as they are
    (the scale's row had its dtype, shape and size four columns to the right)."""
    from tests.quant_folders import deepseek_folder

    deepseek_folder(tmp_path / "ds")
    w = "model.layers.0.mlp.up_proj.weight"
    assert lines_of(capsys, "list", tmp_path / "ds") == [
        "name                                             dtype    shape                      size"
        "  status",
        f"{w}                F8_E4M3  [256, 256]             64.0 KiB  quantized: F8_E4M3, block "
        "128×128, scales F32",
        f"  └ {w}            F8_E4M3  [256, 256]             64.0 KiB",
        f"  └ {w}_scale_inv  F32      [2, 2]                     16 B",
        "lm_head.weight                                   BF16     [8, 256]                4.0 KiB",
        "model.norm.weight                                BF16     [256]                     512 B",
        "0 of 3 tensors differ from BF16 · 1 quantized (FP8 block-scaled (quant_method fp8)) · "
        "67.8 k params · 68.5 KiB",
    ]


# -- quantize -------------------------------------------------------------------------------------

LONG = "long." + "0123456789" * 6 + "012345678"  # 81 characters with ".weight": clipped at 80
MID = "mid." + "0123456789" * 6 + "012345678"  # 80 with ".weight": not clipped


def _linears(tmp_path) -> Path:
    """F32 Linear weights [16, 32]: one all zeros (lossless in any scheme), two with long names,
    w00 to w10."""
    folder = tmp_path / "m"
    folder.mkdir()
    g = np.random.default_rng(0)
    names = ["zero", LONG, MID, *(f"w{i:02d}" for i in range(11))]
    save_arrays(
        folder / "model.safetensors",
        [
            (f"{n}.weight", F32, (g.standard_normal((16, 32)) * (n != "zero")).astype(np.float32))
            for n in names
        ],
    )
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "torch_dtype": "float32",
    }
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_quantize_preview_names_the_worst_weights_and_the_ones_left_out(tmp_path, capsys):
    m = _linears(tmp_path)
    preview = ("quantize", m, "--preview", "--scheme", "FP8_DYNAMIC")
    assert lines_of(capsys, *preview, "--ignore", "w*", "--ignore", MID) == [
        "FP8_DYNAMIC  25.1 KiB (90% of 28.0 KiB), 2 weights, SQNR median lossless, worst 32.4 dB",
        "  FP8_DYNAMIC worst: long.012345678901234567890123...890123456789012345678.weight "
        "(32.4 dB), zero.weight (lossless)",
        "  not quantized: 12 Linear weights (mid.012345678901234...89012345678.weight, w00.weight, "
        "w01.weight, …)",
    ]
    worst = (
        "  FP8_DYNAMIC worst: w09.weight (31.9 dB), w03.weight (32.1 dB), "
        "mid.0123456789012345678901234...890123456789012345678.weight (32.1 dB)"
    )
    assert lines_of(capsys, *preview, "--ignore", "w0[0-2]")[1:] == [
        worst,
        "  not quantized: 3 Linear weights (w00.weight, w01.weight, w02.weight)",
    ]
    assert lines_of(capsys, *preview, "--ignore", "w0[0-3]")[1:] == [
        "  FP8_DYNAMIC worst: w09.weight (31.9 dB), "
        "mid.0123456789012345678901234...890123456789012345678.weight (32.1 dB), w10.weight "
        "(32.2 dB)",
        "  not quantized: 4 Linear weights (w00.weight, w01.weight, w02.weight, …)",
    ]


def test_quantize_names_ten_weights_left_out_then_how_many_more(tmp_path, capsys):
    m, q = _linears(tmp_path), tmp_path / "q"
    left = [f"    w{i:02d}.weight: matches --ignore" for i in range(10)]
    assert lines_of(
        capsys, "quantize", m, "--scheme", "FP8_DYNAMIC", "--ignore", "w0*", "-o", q
    ) == [
        f"wrote {q}: 4 weights quantized with FP8_DYNAMIC (28.0 KiB → 22.2 KiB)",
        "  10 Linear weights left as they were:",
        *left,
    ]
    assert lines_of(
        capsys,
        "quantize",
        m,
        "--scheme",
        "FP8_DYNAMIC",
        "--ignore",
        "w*",
        "--ignore",
        "zero",
        "-o",
        q,
        "--report",
        tmp_path / "r.json",
    ) == [
        f"wrote {q}: 2 weights quantized with FP8_DYNAMIC (28.0 KiB → 25.1 KiB); report in "
        f"{tmp_path / 'r.json'}",
        "  25.1 KiB (90% of 28.0 KiB), 2 weights, SQNR median 32.2 dB, worst 32.1 dB",
        "  12 Linear weights left as they were:",
        "    zero.weight: matches --ignore",
        *left[:9],
        "    and 2 more",
    ]
    assert lines_of(
        capsys,
        "quantize",
        m,
        "--scheme",
        "FP8_DYNAMIC",
        "--ignore",
        "w0*",
        "--ignore",
        "w10",
        "-o",
        q,
    )[1:] == [
        "  11 Linear weights left as they were:",
        *left,
        "    and 1 more",
    ]


def test_a_count_of_one_is_in_the_singular(tmp_path, capsys):
    """ "1 weights quantized", "1 other tensors cast", "1 other file(s)": every count the
    commands print takes its noun in the number it needs."""
    m, q, r = _linears(tmp_path), tmp_path / "q", tmp_path / "r.json"
    only_zero = ("--scheme", "FP8_DYNAMIC", "--ignore", "w*", "--ignore", LONG, "--ignore", MID)
    assert lines_of(capsys, "quantize", m, *only_zero, "-o", q, "--report", r)[:2] == [
        f"wrote {q}: 1 weight quantized with FP8_DYNAMIC (28.0 KiB → 26.6 KiB); report in {r}",
        "  26.6 KiB (95% of 28.0 KiB), 1 weight, SQNR median lossless, worst lossless",
    ]
    assert lines_of(capsys, "quantize", m, *only_zero, "--preview")[0] == (
        "FP8_DYNAMIC  26.6 KiB (95% of 28.0 KiB), 1 weight, SQNR median lossless, worst lossless"
    )
    from tests.quant_folders import deepseek_folder

    deepseek_folder(ds := tmp_path / "ds")
    keep = ("--keep", "model.norm*", "-o", tmp_path / "f32")
    assert lines_of(capsys, "cast", ds, "--target", "F32", *keep) == [
        f"wrote {tmp_path / 'f32'}: 1 quantized weight dequantized to F32 (fp8), 1 other tensor cast"
    ]
    assert lines_of(capsys, "scan", ds)[-2] == (
        "1 other file: not checkpoints, nothing torch would run"
    )
    one = tmp_path / "one.safetensors"
    save_arrays(one, [("w", F32, np.ones(2, np.float32)), ("ids", I64, np.arange(2))])
    assert lines_of(capsys, "check", one) == [
        "ok: the 1 float tensor is F32 (0 of 2 tensors differ from F32 · 4 params · 24 B · I64×1)"
    ]
    ints = tmp_path / "ints.safetensors"
    save_arrays(ints, [("ids", I64, np.arange(2))])
    assert lines_of(capsys, "check", ints)[0].startswith("ok: no float tensor (0 of 1 tensors")


def test_quantize_clips_a_long_name_left_out_and_says_one_in_the_singular(tmp_path, capsys):
    m, q = _linears(tmp_path), tmp_path / "q"
    assert lines_of(
        capsys,
        "quantize",
        m,
        "--scheme",
        "FP8_DYNAMIC",
        "--ignore",
        "zero",
        "--ignore",
        LONG,
        "--ignore",
        MID,
        "-o",
        q,
    ) == [
        f"wrote {q}: 11 weights quantized with FP8_DYNAMIC (28.0 KiB → 12.2 KiB)",
        "  3 Linear weights left as they were:",
        "    zero.weight: matches --ignore",
        "    long.0123456789012345678901234567890123...8901234567890123456789012345678.weight: "
        "matches --ignore",
        f"    {MID}.weight: matches --ignore",
    ]
    assert lines_of(capsys, "quantize", m, "--scheme", "FP8_DYNAMIC", "--ignore", "zero", "-o", q)[
        1:
    ] == [
        "  1 Linear weight left as it was:",
        "    zero.weight: matches --ignore",
    ]


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--preview", "-o", "x"], "--preview writes nothing; leave out -o"),
        (
            ["--scheme", "W4A16"],
            "quantize writes one scheme: give --scheme S and -o OUT (or --preview)",
        ),
        (
            ["--scheme", "W4A16", "-o", "x", "--json"],
            "--json goes with --preview; the saved report is --report R.json",
        ),
        (
            ["--scheme", "W5"],
            "unknown scheme 'W5'; one of FP8_DYNAMIC, FP8_BLOCK, W8A16, W4A16, NVFP4A16, MXFP4A16",
        ),
    ],
)
def test_quantize_usage_errors_are_one_line(tmp_path, capsys, argv, said):
    code, out, err = run(capsys, "quantize", tmp_path / "m", *argv)
    assert (code, out, err) == (2, "", f"checkpoint-inspector: error: {said}\n")


def test_ctrl_c_over_an_existing_quantize_output_says_nothing_was_written(
    tmp_path, capsys, monkeypatch
):
    m, q = _linears(tmp_path), tmp_path / "q"
    assert run(capsys, "quantize", m, "--scheme", "FP8_DYNAMIC", "-o", q)[0] == 0
    before = sorted(p.name for p in q.iterdir())
    _ctrl_c_at_commit(monkeypatch, after=False)
    code, out, err = run(capsys, "quantize", m, "--scheme", "FP8_BLOCK", "-o", q)
    assert (code, out, err) == (
        130,
        "",
        "checkpoint-inspector: error: interrupted; nothing was written\n",
    )
    assert sorted(p.name for p in q.iterdir()) == before


# -- as the installed program runs: worker processes allowed, a progress meter on a terminal ------


def test_small_jobs_of_the_program_start_no_worker_processes(mixed, tmp_path, capsys, monkeypatch):
    """The installed command allows worker processes (library calls do not): a cast or preview
    of a few bytes asks the policy with its size, and starts none."""
    from inspector.core.cast import worker_policy

    monkeypatch.setattr(worker_policy, "_workers_allowed", True)
    monkeypatch.setattr(worker_policy, "usable_cores", lambda: 4)
    monkeypatch.delenv(worker_policy.PROCESSES_ENV, raising=False)
    out = tmp_path / "o.safetensors"
    assert lines_of(capsys, "cast", mixed, "--target", "F16", "-o", out) == [
        f"wrote {out}: 4 of 6 tensors cast to F16, 4 of them lossless"
    ]
    m = _linears(tmp_path)
    assert lines_of(capsys, "quantize", m, "--preview", "--scheme", "FP8_DYNAMIC")[0] == (
        "FP8_DYNAMIC  7.9 KiB (28% of 28.0 KiB), 14 weights, SQNR median 32.4 dB, worst 31.9 dB"
    )


@pytest.mark.parametrize(
    "label, argv",
    [
        ("stats", ["list", "{m}", "--stats"]),
        ("cast", ["cast", "{m}", "--target", "F16", "-o", "{tmp}/o.safetensors"]),
        ("diff", ["diff", "{m}", "{m}"]),
        ("quantize", ["quantize", "{q}", "--scheme", "FP8_DYNAMIC", "-o", "{tmp}/q"]),
        ("preview", ["quantize", "{q}", "--preview", "--scheme", "FP8_DYNAMIC"]),
    ],
)
def test_a_terminal_sees_each_jobs_progress_under_its_name(
    mixed, tmp_path, capsys, monkeypatch, label, argv
):
    q = _linears(tmp_path)
    argv = [a.format(m=mixed, q=q, tmp=tmp_path) for a in argv]
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, _, err = run(capsys, *argv)
    assert code == 0
    assert err.startswith(f"\r{label} ") and err.endswith("\r\x1b[K")
    assert f"\r{label} 100.0%  " in err


# -- what a terminal is shown: escapes, clipping, symbols ----------------------------------------


def test_control_characters_in_names_are_shown_escaped(tmp_path, capsys):
    p = tmp_path / "m.safetensors"
    names = ["cr\r", "tab\t", "nel\x85", "rlo\u202e"]
    save_arrays(p, [(n, F32, np.ones(1, np.float32)) for n in names])
    assert [line.split()[0] for line in lines_of(capsys, "list", p)[1:-1]] == [
        "cr\\r",
        "nel\\x85",
        "rlo\\u202e",
        "tab\\t",
    ]


def test_an_ascii_terminal_gets_ascii_symbols(tmp_path, capsys, monkeypatch):
    import io
    import sys

    p = tmp_path / "m.safetensors"
    save_arrays(p, [("big", F64, np.array([1e6, 1.0])), ("ok", F32, np.ones(1, np.float32))])
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", stdout)
    assert main(["list", str(p)]) == 0
    assert main(["cast", str(p), "--target", "F16", "-o", str(tmp_path / "o.safetensors")]) == 0
    stdout.flush()
    lines = stdout.buffer.getvalue().decode("ascii").splitlines()
    assert lines[1] == "big   F64      [2]                        16 B  != F32"
    assert lines[5] == "  1 value overflowed to +/-inf or was saturated: big (1)"


def test_names_in_the_cast_summary_are_clipped_past_80_characters(tmp_path, capsys):
    p = tmp_path / "m.safetensors"
    n80, n81 = "a" * 40 + "b" * 40, "c" * 40 + "d" * 41
    save_arrays(p, [(n, F32, np.array([1e6], np.float32)) for n in (n80, n81)])
    lines = lines_of(capsys, "cast", p, "--target", "F16", "-o", tmp_path / "o.safetensors")
    assert lines[1] == (
        f"  2 values overflowed to ±inf or were saturated: {'c' * 39}...{'d' * 38} (1), {n80} (1)"
    )


def test_a_training_checkpoints_note_names_the_file(tmp_path, capsys):
    from tests.cli.test_training_checkpoints import _lightning

    _lightning(tmp_path / "last.ckpt")
    code, _, err = run(capsys, "list", tmp_path / "last.ckpt")
    assert (code, err) == (
        0,
        f"checkpoint-inspector: note: {tmp_path / 'last.ckpt'}: Lightning checkpoint: the "
        "model's 4 tensors (prefix state_dict. taken off); 12 other tensors and 21 values "
        "(optimizer state, counters, settings) left out; --keep-all shows everything\n",
    )
    code, out, err = run(capsys, "check", tmp_path / "last.ckpt", "--keep-all")
    assert (code, err) == (0, "")
    assert (
        out
        == "ok: all 16 float tensors are F32 (0 of 16 tensors differ from F32 · 178 params · 712 B)\n"
    )


def test_a_config_lists_modules_kept_in_f32_on_purpose(tmp_path, capsys):
    m = _llama_folder(tmp_path / "m")
    config = {
        "torch_dtype": "bfloat16",
        "quantization_config": {
            "quant_method": "fp8",
            "modules_to_not_convert": ["model.layers.0.mlp.up_proj"],
        },
    }
    (m / "config.json").write_text(json.dumps(config))
    assert lines_of(capsys, "list", m)[1] == (
        "model.layers.0.mlp.up_proj.weight  F32      [2, 4]                     32 B  F32 on purpose?"
    )


# -- the entry ------------------------------------------------------------------------------------


def test_main_without_arguments_reads_the_command_line(mixed, capsys, monkeypatch):
    """sys.argv[1:]: a program name taken for a command, or a command for the program's name,
    would open the window; without a display that is a usage error at once, not a window the
    test waits on (the mutation run's one timeout, sys.argv[2:])."""
    import sys

    monkeypatch.setattr(sys, "platform", "linux")
    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "argv", ["checkpoint-inspector", "check", str(mixed)])
    assert main() == 1
    assert capsys.readouterr().out.startswith("w: F64 (expected F32)\n")


def test_a_closed_stdout_alone_is_said_on_stderr(mixed, capfd, monkeypatch):
    import sys

    monkeypatch.setattr(sys, "stdout", None)
    assert main(["list", str(mixed)]) == 2
    assert capfd.readouterr().err == (
        "checkpoint-inspector: error: standard output is closed; nothing to write to\n"
    )


def test_an_error_line_longer_than_400_characters_is_clipped(tmp_path, capsys):
    """ "checkpoint-inspector: error: " then at most 400 characters: 401 are clipped to 400."""
    said = "unknown scheme 'W'; one of FP8_DYNAMIC, FP8_BLOCK, W8A16, W4A16, NVFP4A16, MXFP4A16"
    for n, clipped in ((400, False), (401, True)):
        scheme = "W" * (n - len(said) + 1)
        code, _, err = run(capsys, "quantize", tmp_path, "--scheme", scheme)
        line = err.removeprefix("checkpoint-inspector: error: ")
        assert (code, len(line), line.count("...")) == (2, 401, int(clipped))


def test_list_stats_of_a_folder_marks_tensors_kept_on_purpose(tmp_path, capsys):
    """The status column is as wide as its longest text: "F32 on purpose?" shifted that row's
    numbers four columns right of every other row's."""
    m = _llama_folder(tmp_path / "m")
    assert lines_of(capsys, "list", m, "--stats") == [
        "name                          dtype    shape           status                min       max"
        "      mean       std   nan   inf",
        "model.layers.0.mlp.up_proj.weight",
        "                              F32      [2, 4]          ≠ BF16                  1         1"
        "         1         0     0     0",
        "model.norm.weight             F32      [4]             F32 on purpose?         1         1"
        "         1         0     0     0",
        "model.embed_tokens.weight     BF16     [3, 4]                                  1         1"
        "         1         0     0     0",
        "2 of 3 tensors differ from BF16 · 24 params · 72 B · F32×2",
    ]
    assert lines_of(capsys, "list", m, "--stats", "--target", "F32")[0] == (
        "name                          dtype    shape           status            min       max"
        "      mean       std   nan   inf"
    )  # nothing on purpose against F32: the column keeps its width of 11


def test_list_stats_of_weights_it_cannot_dequantize_says_why(tmp_path, capsys):
    """AWQ "gemv": the weight's row and its stored tensors, no numbers in its row."""
    from tests.quant_folders import folder, gptq_tensors

    qc = {"quant_method": "awq", "bits": 4, "group_size": 32, "version": "gemv"}
    folder(tmp_path / "awq", gptq_tensors()[:-1], qc)
    p = "model.layers.0.mlp.up_proj."
    assert lines_of(capsys, "list", tmp_path / "awq", "--stats")[1:-1] == [
        f"{p}weight",
        "                              I32      [64, 16]        quantized",
        "  quantized:                  int4 packed in I32, group 32, scales F16",
        *(
            line
            for name, dtype, shape in (
                ("qweight", "I32", "[16, 64]"),
                ("scales", "F16", "[4, 64]"),
                ("qzeros", "I32", "[4, 8]"),
                ("g_idx", "I32", "[128]"),
            )
            for line in (f"  └ {p}{name}", f"{'':<30}{dtype:<8} {shape}")
        ),
        "0 of 1 tensors differ from BF16 · 1 quantized (AWQ) · 1.0 k params · 5.1 KiB",
    ]
    assert lines_of(capsys, "list", tmp_path / "awq", "--stats")[-1] == (
        "quantized values not shown: AWQ version 'gemv' packs its weights in a layout not read "
        "yet; a cast would write its codes as values, so it is refused"
    )


def test_cast_names_three_tensors_of_a_kind_without_more(tmp_path, capsys):
    src = tmp_path / "r.safetensors"
    save_arrays(src, [(f"t{i}", F32, np.array([1e6 * (i + 1)], np.float32)) for i in range(3)])
    lines = lines_of(capsys, "cast", src, "--target", "F16", "-o", tmp_path / "o.safetensors")
    assert lines[1] == "  3 values overflowed to ±inf or were saturated: t2 (1), t1 (1), t0 (1)"


def test_a_shape_mismatch_row_has_its_detail_two_spaces_after_the_name_as_every_row(
    tmp_path, capsys
):
    """The shape mismatch's detail began with the space that joins it to a dtype pair: three
    spaces after the name where every other row has two."""
    a, b = tmp_path / "a.safetensors", tmp_path / "b.safetensors"
    save_arrays(a, [("s", F32, np.zeros(2, np.float32)), ("w", F32, np.zeros(2, np.float32))])
    save_arrays(b, [("s", F32, np.zeros(3, np.float32)), ("w", F32, np.ones(2, np.float32))])
    assert lines_of(capsys, "diff", a, b, code=1) == [
        "shape_mismatch  s  [2] vs [3]",
        "differ          w  max abs 1, max rel 1",
        "different: 1 shape_mismatch, 1 differ",
    ]


def test_diff_rows_of_a_shape_mismatch_and_of_an_exactly_dequantized_weight(tmp_path, capsys):
    a, b = tmp_path / "a.safetensors", tmp_path / "b.safetensors"
    save_arrays(a, [("b", F32, np.zeros(2, np.float32))])
    save_arrays(b, [("b", F64, np.zeros(3))])
    assert lines_of(capsys, "diff", a, b, code=1) == [
        "shape_mismatch  b  (F32 vs F64) [2] vs [3]",
        "different: 1 shape_mismatch",
    ]
    from tests.quant_folders import deepseek_folder

    deepseek_folder(tmp_path / "ds")
    assert run(capsys, "cast", tmp_path / "ds", "--target", "F32", "-o", tmp_path / "f32")[0] == 0
    assert lines_of(capsys, "diff", tmp_path / "ds", tmp_path / "f32") == [
        "dtype_only      model.layers.0.mlp.up_proj.weight  max abs 0, max rel 0, rel Frobenius 0,"
        " SQNR inf dB (fp8)",
        "dtype_only      model.norm.weight  max abs 0, max rel 0 (BF16 vs F32)",
        "dtype_only      lm_head.weight  max abs 0, max rel 0 (BF16 vs F32)",
        "equal: 3 dtype_only",
    ]


def test_the_window_without_a_display_or_a_path_is_one_line(capsys, monkeypatch):
    import sys

    monkeypatch.setattr(sys, "platform", "linux")
    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    code, out, err = run(capsys)
    assert (code, out) == (2, "")
    assert err.startswith(
        "checkpoint-inspector: error: no display to open the window on (DISPLAY and "
        "WAYLAND_DISPLAY are unset); use the subcommands (checkpoint-inspector list PATH)"
    )


def test_stdout_and_stderr_both_closed_is_exit_2_without_a_word(mixed, monkeypatch):
    import sys
    import types

    from inspector.cli import dispatch

    def closed(fd, data):
        raise OSError(9, "Bad file descriptor")

    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(dispatch, "os", types.SimpleNamespace(write=closed))
    assert main(["list", str(mixed)]) == 2


def test_a_command_stopped_in_another_thread_exits_130(tmp_path, capsys, monkeypatch):
    """main() called from a thread (a program's worker): the handlers it may not set there are
    left alone, and a Ctrl-C still ends it with 130."""
    import threading

    from inspector.cli import dispatch

    def pressed(args):
        raise KeyboardInterrupt

    monkeypatch.setitem(dispatch.COMMANDS, "list", pressed)
    codes = []
    thread = threading.Thread(target=lambda: codes.append(main(["list", "x.safetensors"])))
    thread.start()
    thread.join()
    assert codes == [130]
    assert (
        capsys.readouterr().err == "checkpoint-inspector: error: interrupted; nothing was written\n"
    )


def test_diff_of_weights_it_cannot_dequantize_compares_them_as_stored(tmp_path, capsys):
    """AWQ "gemv" is not read yet: its qweight, scales, zeros and g_idx are compared tensor by
    tensor (dequantizing them would misread the codes)."""
    from tests.quant_folders import folder, gptq_tensors

    qc = {"quant_method": "awq", "bits": 4, "group_size": 32, "version": "gemv"}
    folder(tmp_path / "awq", gptq_tensors()[:-1], qc)
    assert lines_of(capsys, "diff", tmp_path / "awq", tmp_path / "awq") == ["equal: 4 equal"]


def test_sigterm_after_the_output_was_written_says_so_and_exits_143(
    mixed, tmp_path, capsys, monkeypatch
):
    import signal

    from inspector.cli.signals import Terminated
    from inspector.core.save.writer import AtomicWriter

    commit = AtomicWriter.commit

    def terminated(self):
        commit(self)
        raise Terminated(signal.SIGTERM)

    monkeypatch.setattr(AtomicWriter, "commit", terminated)
    out = tmp_path / "o.safetensors"
    code, stdout, err = run(capsys, "cast", mixed, "--target", "F16", "-o", out)
    assert (code, stdout) == (143, "")
    assert err == (
        f"checkpoint-inspector: error: stopped by SIGTERM after {out} was written; it is complete\n"
    )


def test_ctrl_c_after_a_folder_output_was_replaced_says_it_was_written(
    tmp_path, capsys, monkeypatch
):
    """An output folder that existed: its entries (names and inodes) tell a replaced one."""
    m, out = _llama_folder(tmp_path / "m"), tmp_path / "out"
    assert run(capsys, "cast", m, "-o", out)[0] == 0
    _ctrl_c_at_commit(monkeypatch, after=True)
    code, stdout, err = run(capsys, "cast", m, "--target", "F16", "-o", out)
    assert (code, stdout) == (130, "")
    assert (
        err == f"checkpoint-inspector: error: interrupted after {out} was written; it is complete\n"
    )


def test_cast_of_a_model_in_two_schemes_names_both(tmp_path, capsys):
    """A compressed-tensors model whose config groups take two schemes (mixed precision): the
    dequantizing cast names both, sorted and joined by a comma."""
    from safetensors.torch import load_file, save_file

    src = tmp_path / "src"
    src.mkdir()
    g = np.random.default_rng(0)
    save_arrays(
        src / "model.safetensors",
        [(f"{n}.weight", F32, g.standard_normal((16, 128)).astype(np.float32)) for n in "ab"],
    )
    (src / "config.json").write_text(json.dumps({"model_type": "llama", "torch_dtype": "float32"}))
    tensors, groups = {}, {}
    for scheme, keep, other in (("W8A16", "a", "b"), ("FP8_DYNAMIC", "b", "a")):
        q = tmp_path / scheme
        assert run(capsys, "quantize", src, "--scheme", scheme, "--ignore", other, "-o", q)[0] == 0
        written = load_file(q / "model.safetensors")
        tensors.update({k: v for k, v in written.items() if k.startswith(f"{keep}.")})
        qc = json.loads((q / "config.json").read_text())["quantization_config"]
        group = qc["config_groups"]["group_0"]
        groups[f"group_{keep}"] = {**group, "targets": [f"re:^{keep}$"], "format": qc["format"]}
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    save_file(tensors, mixed / "model.safetensors", metadata={"format": "pt"})
    qc = {**qc, "config_groups": groups, "ignore": [], "format": "mixed-precision"}
    config = {"model_type": "llama", "torch_dtype": "float32", "quantization_config": qc}
    (mixed / "config.json").write_text(json.dumps(config))
    out = tmp_path / "out"
    said = lines_of(capsys, "cast", mixed, "--target", "F32", "-o", out)[0]
    assert said == (
        f"wrote {out}: 2 quantized weights dequantized to F32 (float-quantized, pack-quantized), "
        "0 other tensors cast"
    )


def test_list_gives_the_shape_a_weight_stores_not_the_one_its_codes_suggest(tmp_path, capsys):
    """A pack-quantized weight's shape is its weight_shape (125 columns pack into the same 16
    words as 128) and a bitsandbytes 4-bit weight's is in its quant state: list reads both."""
    from safetensors.torch import load_file, save_file

    from tests.quant_folders import bnb4_tensors, folder

    src = tmp_path / "src"
    save_arrays(
        (src.mkdir() or src) / "model.safetensors",
        [("a.weight", F32, np.random.default_rng(0).standard_normal((16, 128), np.float32))],
    )
    (src / "config.json").write_text(json.dumps({"model_type": "llama", "torch_dtype": "float32"}))
    q = tmp_path / "q"
    assert run(capsys, "quantize", src, "--scheme", "W4A16", "-o", q)[0] == 0
    tensors = load_file(q / "model.safetensors")
    tensors["a.weight_shape"] = torch.tensor([16, 125])
    save_file(tensors, q / "model.safetensors", metadata={"format": "pt"})
    assert lines_of(capsys, "list", q)[1].split()[:4] == ["a.weight", "I32", "[16,", "125]"]
    state = json.dumps(
        {"quant_type": "nf4", "blocksize": 64, "dtype": "bfloat16", "shape": [64, 128]}
    )
    tensors = bnb4_tensors()
    tensors[3] = (tensors[3][0], tensors[3][1], np.frombuffer(state.encode(), np.uint8))
    folder(tmp_path / "bnb", tensors, {"quant_method": "bitsandbytes", "load_in_4bit": True})
    row = lines_of(capsys, "list", tmp_path / "bnb")[1].split()
    assert row[:4] == ["model.layers.0.mlp.up_proj.weight", "U8", "[64,", "128]"]


def test_list_stats_of_a_weight_it_cannot_dequantize_gives_no_numbers(tmp_path, capsys):
    """FP8 codes with no quantization_config to confirm their scales: the codes' own statistics
    are never shown as the weight's values."""
    from tests.quant_folders import deepseek_folder

    deepseek_folder(tmp_path / "ds")
    config = json.loads((tmp_path / "ds" / "config.json").read_text())
    del config["quantization_config"]
    (tmp_path / "ds" / "config.json").write_text(json.dumps(config))
    lines = lines_of(capsys, "list", tmp_path / "ds", "--stats")
    assert lines[1:3] == [
        "model.layers.0.mlp.up_proj.weight",
        "                              F8_E4M3  [256, 256]      quantized",
    ]


def test_list_stats_keeps_a_quantized_name_as_wide_as_the_column_on_its_row(tmp_path, capsys):
    """28 characters fit list --stats' name column: only a longer name takes a line of its own,
    for a quantized weight as for every row."""
    src, q, w = tmp_path / "src", tmp_path / "q", A28[:21] + ".weight"
    save_arrays(
        (src.mkdir() or src) / "model.safetensors",
        [(w, F32, np.ones((16, 128), np.float32))],
    )
    (src / "config.json").write_text(json.dumps({"model_type": "llama", "torch_dtype": "float32"}))
    assert run(capsys, "quantize", src, "--scheme", "FP8_DYNAMIC", "-o", q)[0] == 0
    lines = lines_of(capsys, "list", q, "--stats")
    assert lines[1].startswith(f"{w}  F8_E4M3  [16, 128]       quantized")
    assert lines[4] == f"  └ {w}"
