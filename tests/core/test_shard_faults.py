"""Sharded checkpoints and odd paths: every fault is one clear CheckpointError naming the problem."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from huggingface_hub import save_torch_state_dict
from safetensors.torch import save_file

from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint

INDEX = "model.safetensors.index.json"


def _state() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return {f"layer{i}.weight": torch.randn(64, 64, generator=g) for i in range(4)} | {
        "embed.ids": torch.arange(10, dtype=torch.int64)
    }


@pytest.fixture
def sharded(tmp_path) -> Path:
    """A real HF-style sharded checkpoint: 4 x 16 KB tensors, 20 KB shards -> several files."""
    folder = tmp_path / "ckpt"
    folder.mkdir()
    save_torch_state_dict(_state(), folder, max_shard_size=20_000)
    assert len(list(folder.glob("*.safetensors"))) >= 3
    return folder


def index_of(folder: Path) -> dict:
    return json.loads((folder / INDEX).read_text())


def write_index(folder: Path, index: dict) -> None:
    (folder / INDEX).write_text(json.dumps(index))


def reason(path) -> CheckpointError:
    with pytest.raises(CheckpointError) as err:
        open_checkpoint(path)
    e = err.value
    assert "\n" not in str(e)
    return e


def test_good_sharded_checkpoint_reads_back(sharded):
    state = _state()
    for path in (sharded, sharded / INDEX):
        with open_checkpoint(path) as ckpt:
            assert ckpt.is_sharded and len(ckpt.files) >= 3
            assert {t.name for t in ckpt.tensors} == set(state)
            for name, value in state.items():
                np.testing.assert_array_equal(ckpt.view(name), value.numpy())


# -- the three index/shard disagreements -------------------------------------------------------


def test_index_names_a_missing_shard(sharded):
    index = index_of(sharded)
    gone = index["weight_map"]["layer2.weight"]
    (sharded / gone).unlink()
    e = reason(sharded)
    assert e.path == str(sharded / INDEX)
    assert f"shard '{gone}' named in the index is missing" in e.reason


def test_tensor_in_index_but_not_in_its_shard(sharded):
    index = index_of(sharded)
    shard = index["weight_map"]["layer0.weight"]
    index["weight_map"]["ghost.bias"] = shard
    write_index(sharded, index)
    e = reason(sharded)
    assert (
        e.reason == f"tensor 'ghost.bias' is listed in the index but missing from shard '{shard}'"
    )


def test_shard_tensor_missing_from_index(sharded):
    index = index_of(sharded)
    shard = index["weight_map"].pop("embed.ids")
    assert shard in index["weight_map"].values()  # its shard still holds a listed tensor
    write_index(sharded, index)
    e = reason(sharded)
    assert e.path == str(sharded / shard)
    assert e.reason == "tensor 'embed.ids' is in this shard but not in the index"


def test_shard_file_the_index_never_names(sharded):
    """Drop every entry of one shard: the index no longer mentions the file at all."""
    index = index_of(sharded)
    wm = index["weight_map"]
    shard = wm["layer1.weight"]
    for name in [n for n, s in wm.items() if s == shard]:
        del wm[name]
    write_index(sharded, index)
    e = reason(sharded)
    assert e.path == str(sharded / INDEX)
    assert e.reason == (
        f"shard '{shard}' is in the folder but the index names none of its tensors "
        "(the index is incomplete)"
    )


def test_index_puts_tensor_in_another_shard(sharded):
    index = index_of(sharded)
    wm = index["weight_map"]
    home = wm["embed.ids"]
    other = next(s for s in wm.values() if s != home)
    wm["embed.ids"] = other  # its real shard keeps another tensor, so stays in the index
    write_index(sharded, index)
    e = reason(sharded)
    # whichever shard is read first tells: one lacks the tensor, the other holds it unlisted
    assert e.reason in (
        f"tensor 'embed.ids' is listed in the index but missing from shard '{other}'",
        f"tensor 'embed.ids' is in this shard but the index puts it in '{other}'",
    )


def test_corrupt_shard_is_named(sharded):
    shard = sorted(sharded.glob("*.safetensors"))[1]
    shard.write_bytes(shard.read_bytes()[:-3])
    e = reason(sharded)
    assert e.path == str(shard) and "truncated" in e.reason


def test_pickle_posing_as_shard(sharded):
    shard = sorted(sharded.glob("*.safetensors"))[0]
    torch.save({"w": torch.ones(2)}, shard)
    e = reason(sharded)
    assert e.path == str(shard) and "PyTorch pickle" in e.reason


# -- broken index files -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("", "index file is empty"),
        ("   \n", "index file is empty"),
        ("{not json", "index is not valid JSON"),
        ("[1, 2]", "the JSON is a list, not an object"),
        ('{"metadata": {}}', 'no "weight_map"'),
        ('{"weight_map": ["a"]}', '"weight_map" must be an object'),
        ('{"weight_map": {}}', '"weight_map" is empty'),
        ('{"weight_map": {"a": 5}}', "weight_map entry for 'a' is not a file name"),
        ('{"weight_map": {"a": "../outside.safetensors"}}', "points outside the index's folder"),
        ('{"weight_map": {"a": "/etc/passwd"}}', "points outside the index's folder"),
        ("[" * 100_000 + "]" * 100_000, "index is not valid JSON"),
        (b"\xff\xfe{}", "not valid UTF-8"),
    ],
    ids=[
        "empty",
        "blank",
        "not-json",
        "list",
        "no-weight-map",
        "weight-map-list",
        "weight-map-empty",
        "shard-not-string",
        "dotdot",
        "absolute",
        "deep",
        "not-utf8",
    ],
)
def test_broken_index(tmp_path, content, says):
    p = tmp_path / INDEX
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content)
    (tmp_path / "outside.safetensors").write_bytes(b"")  # ../ must not be followed even if present
    for path in (p, tmp_path):
        e = reason(path)
        assert e.path == str(p)
        assert says in e.reason


# -- folders and odd paths ---------------------------------------------------------------------


def test_folder_with_several_files_and_no_index(tmp_path):
    for name in ("a.safetensors", "b.safetensors"):
        save_file({"x": torch.zeros(2)}, str(tmp_path / name))
    e = reason(tmp_path)
    assert "2 .safetensors files but no index.json" in e.reason


def test_folder_with_two_index_files(sharded):
    shutil.copy(sharded / INDEX, sharded / "other.safetensors.index.json")
    shutil.move(sharded / INDEX, sharded / "first.safetensors.index.json")
    e = reason(sharded)
    assert "holds 2 index files" in e.reason


def test_empty_folder_and_missing_path(tmp_path):
    assert "no .safetensors file" in reason(tmp_path).reason
    assert "no such file" in reason(tmp_path / "nope.safetensors").reason


def test_devices_are_refused_not_read():
    for dev in ("/dev/zero", "/dev/null"):
        if os.path.exists(dev):
            assert "is a device" in reason(dev).reason


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_named_pipes_do_not_hang(tmp_path):
    """Opening a FIFO with no writer blocks forever; we must refuse it instead. A child process
    runs the opens so that a regression fails with a timeout instead of hanging the suite."""
    os.mkfifo(tmp_path / "x.safetensors")
    os.mkfifo(tmp_path / INDEX.replace("model", "fifo"))
    folder = tmp_path / "only-fifo"
    folder.mkdir()
    os.mkfifo(folder / "y.safetensors")
    code = (
        "import sys\n"
        "from inspector.core.opening import open_checkpoint\n"
        "from inspector.core.errors import CheckpointError\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        open_checkpoint(p)\n"
        "    except CheckpointError as e:\n"
        "        print(e.reason)\n"
    )
    paths = [tmp_path / "x.safetensors", tmp_path / INDEX.replace("model", "fifo"), folder]
    out = subprocess.run(
        [sys.executable, "-c", code, *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.splitlines()
    assert out == [
        "is a named pipe (FIFO), not a .safetensors file",
        "is a named pipe (FIFO), not a .safetensors file",
        "folder holds no .safetensors file and no *.safetensors.index.json (nor a PyTorch pickle"
        ", a Burnpack .bpk or a .gguf)",
    ]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_permission_denied(tmp_path):
    p = tmp_path / "x.safetensors"
    save_file({"x": torch.zeros(2)}, str(p))
    p.chmod(0)
    try:
        assert reason(p).reason == "permission denied"
    finally:
        p.chmod(0o644)


# -- files changed on disk after opening -------------------------------------------------------


def test_file_truncated_after_open_is_refused_not_a_crash(tmp_path):
    """Reading mapped pages past the end of a truncated file kills the process with SIGBUS; we
    check first. Run in a child so that a regression fails the test instead of the test run."""
    p = tmp_path / "x.safetensors"
    save_file({"a": torch.ones(1000), "b": torch.ones(100_000)}, str(p))
    code = (
        "import os, sys\n"
        "from inspector.core.opening import open_checkpoint\n"
        "from inspector.core.errors import CheckpointError\n"
        "ck = open_checkpoint(sys.argv[1])\n"
        "assert float(ck.view('a').sum()) == 1000.0\n"
        "os.truncate(sys.argv[1], 5000)\n"
        "try:\n"
        "    print(float(ck.view('b').sum()))\n"
        "except CheckpointError as e:\n"
        "    print(e.reason)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(p)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr[-500:]
    assert r.stdout.strip() == "file was truncated on disk since it was opened; reopen it"


def test_file_replaced_or_deleted_after_open_keeps_its_data(tmp_path):
    p = tmp_path / "x.safetensors"
    save_file({"a": torch.arange(5, dtype=torch.float32)}, str(p))
    with open_checkpoint(p) as ckpt:
        assert ckpt.view("a").tolist() == [0, 1, 2, 3, 4]
        save_file({"other": torch.zeros(1)}, str(tmp_path / "new.safetensors"))
        os.replace(tmp_path / "new.safetensors", p)  # an atomic save over it
        assert ckpt.view("a").tolist() == [0, 1, 2, 3, 4]
        p.unlink()
        assert ckpt.view("a").tolist() == [0, 1, 2, 3, 4]
