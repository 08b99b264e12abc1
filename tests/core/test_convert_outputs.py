"""Where a cast writes: a pickle's output name, refusals of output names that cannot be right,
a one-shard pickle index converted, config.json left alone when nothing was cast, and the
report's file mode following the source's."""

from __future__ import annotations

import json
import os

import pytest
import torch
from safetensors.torch import load_file, save_file

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job

F16 = DTYPES["F16"]


def _cast(path, out, target=F16, **kw):
    with open_checkpoint(path) as ckpt:
        return run_job(cast_checkpoint(ckpt, target, str(out), **kw))


def test_a_pickle_cast_into_a_folder_is_named_safetensors(tmp_path):
    torch.save({"w": torch.ones(2)}, tmp_path / "weights.pt")
    save_file({"w": torch.ones(2)}, tmp_path / "plain.safetensors")
    out = tmp_path / "out"
    out.mkdir()
    _cast(tmp_path / "weights.pt", out)
    _cast(tmp_path / "plain.safetensors", out)
    assert sorted(os.listdir(out)) == ["plain.safetensors", "weights.safetensors"]
    assert load_file(str(out / "weights.safetensors"))["w"].dtype == torch.float16


@pytest.mark.parametrize("name", ["out.bin", "OUT.PT", "x.pth"])
def test_a_pickle_is_not_written_under_a_pickle_name(tmp_path, name):
    torch.save({"w": torch.ones(2)}, tmp_path / "weights.pt")
    with pytest.raises(CheckpointError) as e:
        _cast(tmp_path / "weights.pt", tmp_path / name)
    assert (e.value.path, e.value.reason) == (
        str(tmp_path / name),
        "the output is safetensors or Burnpack (a pickle input is converted); "
        "name it .safetensors or .bpk",
    )


def test_a_sharded_input_is_not_written_to_a_safetensors_file_name(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    for i in (1, 2):
        save_file({f"t{i}": torch.ones(2)}, src / f"m-0000{i}-of-00002.safetensors")
    (src / "m.safetensors.index.json").write_text(
        json.dumps({"weight_map": {f"t{i}": f"m-0000{i}-of-00002.safetensors" for i in (1, 2)}})
    )
    with pytest.raises(CheckpointError) as e:
        _cast(src / "m.safetensors.index.json", tmp_path / "new.safetensors")
    assert e.value.path == str(tmp_path / "new.safetensors")
    assert e.value.reason == (
        "the input has 2 shards, so the output is a folder (weights, index and model files); "
        "give a folder name, or a .bpk file name for one Burnpack file"
    )
    assert not (tmp_path / "new.safetensors").exists()


def test_a_one_shard_pickle_index_is_converted_with_its_index(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    torch.save({"w": torch.ones(2), "b": torch.zeros(3)}, src / "pytorch_model-00001-of-00001.bin")
    shard = "pytorch_model-00001-of-00001.bin"
    (src / "pytorch_model.bin.index.json").write_text(
        json.dumps({"metadata": {"total_size": 20}, "weight_map": {"w": shard, "b": shard}})
    )
    _cast(src / "pytorch_model.bin.index.json", tmp_path / "out")
    index = json.loads((tmp_path / "out" / "model.safetensors.index.json").read_text())
    assert index["weight_map"] == {
        "w": "model-00001-of-00001.safetensors",
        "b": "model-00001-of-00001.safetensors",
    }
    with open_checkpoint(tmp_path / "out") as ckpt:
        assert {t.name: t.dtype.name for t in ckpt.tensors} == {"w": "F16", "b": "F16"}


def test_safetensors_shards_keep_their_names_even_with_a_torch_stem(tmp_path):
    """Only a pickle shard is renamed (pytorch_model-… → model-…, as transformers names the
    converted file); a safetensors shard keeps its name, which its index names too."""
    src = tmp_path / "in"
    src.mkdir()
    shards = {f"t{i}": f"pytorch_model-0000{i}-of-00002.safetensors" for i in (1, 2)}
    for name, shard in shards.items():
        save_file({name: torch.ones(2)}, src / shard)
    (src / "model.safetensors.index.json").write_text(json.dumps({"weight_map": shards}))
    _cast(src / "model.safetensors.index.json", tmp_path / "out")
    assert sorted(os.listdir(tmp_path / "out")) == sorted(
        ["model.safetensors.index.json", *shards.values()]
    )
    with open_checkpoint(tmp_path / "out") as ckpt:
        assert {t.name: t.dtype.name for t in ckpt.tensors} == {"t1": "F16", "t2": "F16"}


def test_config_json_is_copied_as_it_is_when_nothing_was_cast(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    save_file({"w": torch.ones(2, dtype=torch.float16)}, src / "model.safetensors")
    config = b'{"torch_dtype":"float16","b":1,"a":2}'  # not in transformers' layout
    (src / "config.json").write_bytes(config)
    _cast(src, tmp_path / "out")
    assert (tmp_path / "out" / "config.json").read_bytes() == config


def test_the_report_gets_the_source_s_permissions(tmp_path):
    save_file({"w": torch.ones(2)}, tmp_path / "m.safetensors")
    os.chmod(tmp_path / "m.safetensors", 0o600)
    _cast(
        tmp_path / "m.safetensors", tmp_path / "o.safetensors", report_path=str(tmp_path / "r.json")
    )
    assert os.stat(tmp_path / "r.json").st_mode & 0o777 == 0o600
    assert os.stat(tmp_path / "o.safetensors").st_mode & 0o777 == 0o600


def test_a_large_tensor_after_small_ones_keeps_the_file_order(tmp_path):
    """Small tensors are batched before they are handed to the writer; a large one arriving
    while some are waiting must not overtake them."""
    g = torch.Generator().manual_seed(5)
    sd = {
        "a": torch.randn(10, generator=g),
        "b": torch.randn(3, generator=g),
        "c": torch.randn(3 << 20, generator=g),  # 12 MiB: chunks past the batch limit
    }
    save_file(sd, tmp_path / "m.safetensors")
    _cast(tmp_path / "m.safetensors", tmp_path / "o.safetensors")
    out = load_file(str(tmp_path / "o.safetensors"))
    for name, t in sd.items():
        assert torch.equal(out[name], t.to(torch.float16)), name


def test_a_model_folder_is_not_written_to_a_safetensors_file_name(tmp_path):
    src = tmp_path / "model"
    src.mkdir()
    save_file({"w": torch.ones(2)}, src / "model.safetensors")
    with pytest.raises(CheckpointError) as e:
        _cast(src, tmp_path / "out.safetensors")
    assert (e.value.path, e.value.reason) == (
        str(tmp_path / "out.safetensors"),
        "the input is a model folder, so the output is a folder (weights, index and model "
        "files); give a folder name, or a .bpk file name for one Burnpack file",
    )


def test_a_report_file_asked_for_gets_the_numbers_even_without_report(tmp_path):
    save_file({"w": torch.tensor([1.0001, 2.0])}, tmp_path / "m.safetensors")
    _cast(
        tmp_path / "m.safetensors",
        tmp_path / "o.safetensors",
        report=False,
        report_path=str(tmp_path / "r.json"),
    )
    (row,) = json.loads((tmp_path / "r.json").read_text())["tensors"]
    assert row["max_abs_err"] is not None and row["lossless"] is False


def test_an_odd_sized_strided_pickle_view_is_cast_bit_for_bit(tmp_path):
    """A transposed 3×3 F32 view: 36 bytes, gathered and cast like any other tensor."""
    t = torch.arange(9, dtype=torch.float32).reshape(3, 3).t() / 3
    torch.save({"t": t}, tmp_path / "v.pt")
    _cast(tmp_path / "v.pt", tmp_path / "o.safetensors")
    assert torch.equal(load_file(str(tmp_path / "o.safetensors"))["t"], t.to(torch.float16))


def test_a_source_truncated_after_opening_names_itself_in_the_cast(tmp_path):
    src = tmp_path / "m.safetensors"
    save_file({"w": torch.ones(4096)}, src)
    with open_checkpoint(src) as ckpt:
        os.truncate(src, 9000)
        with pytest.raises(CheckpointError) as e:
            run_job(cast_checkpoint(ckpt, F16, str(tmp_path / "o.safetensors")))
    assert (e.value.path, e.value.reason) == (
        str(src),
        "file was truncated on disk since it was opened; reopen it",
    )
    assert not (tmp_path / "o.safetensors").exists()


def test_a_folder_that_is_not_there_is_refused_before_any_work(tmp_path):
    """``-o out/`` for a missing folder was written in full, then failed at the rename."""
    torch.save({"w": torch.ones(2)}, tmp_path / "weights.pt")
    with pytest.raises(CheckpointError) as e:
        _cast(tmp_path / "weights.pt", str(tmp_path / "missing") + "/")
    assert e.value.reason == "no such folder: create it first, or give a file name without the '/'"
    assert sorted(os.listdir(tmp_path)) == ["weights.pt"]
