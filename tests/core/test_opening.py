"""Which checkpoint a folder opens as: transformers' priorities (safetensors before pickles), hidden
files ignored, one pickle opened, several named, and the folder remembered."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from inspector.core.checkpoint import open_checkpoint
from inspector.core.errors import AmbiguousCheckpointError

torch = pytest.importorskip("torch")


def _index(folder, name, shard):
    (folder / name).write_text(json.dumps({"metadata": {}, "weight_map": {"w": shard}}))


def test_a_safetensors_index_comes_before_a_pickle_index(tmp_path):
    save_file({"w": np.zeros(2, np.float32)}, str(tmp_path / "model-00001-of-00001.safetensors"))
    _index(tmp_path, "model.safetensors.index.json", "model-00001-of-00001.safetensors")
    torch.save({"w": torch.zeros(2)}, tmp_path / "pytorch_model-00001-of-00001.bin")
    _index(tmp_path, "pytorch_model.bin.index.json", "pytorch_model-00001-of-00001.bin")
    with open_checkpoint(tmp_path) as ckpt:
        assert ckpt.index_path.endswith("model.safetensors.index.json")
        assert ckpt.folder == str(tmp_path)


def test_hidden_files_are_not_checkpoints(tmp_path):
    save_file({"w": np.zeros(2, np.float32)}, str(tmp_path / "model.safetensors"))
    save_file({"v": np.zeros(2, np.float32)}, str(tmp_path / ".backup.safetensors"))
    (tmp_path / ".old.safetensors.index.json").write_text("{}")
    with open_checkpoint(tmp_path) as ckpt:
        assert [t.name for t in ckpt.tensors] == ["w"] and ckpt.folder == str(tmp_path)


def test_one_pickle_is_opened_two_are_named(tmp_path):
    torch.save({"w": torch.zeros(2)}, tmp_path / "pytorch_model.bin")
    (tmp_path / ".hidden.bin").write_bytes(b"x")
    with open_checkpoint(tmp_path) as ckpt:
        assert [t.name for t in ckpt.tensors] == ["w"]
    torch.save({"v": torch.zeros(2)}, tmp_path / "other.pt")
    with pytest.raises(AmbiguousCheckpointError) as e:
        open_checkpoint(tmp_path)
    assert e.value.reason == (
        "folder holds 2 PyTorch pickle files but no index.json to join them; open one file"
    )
    assert sorted(e.value.choices) == [
        str(tmp_path / "other.pt"),
        str(tmp_path / "pytorch_model.bin"),
    ]


def test_two_indexes_are_offered_as_choices(tmp_path):
    save_file({"w": np.zeros(2, np.float32)}, str(tmp_path / "a-00001-of-00001.safetensors"))
    _index(tmp_path, "a.safetensors.index.json", "a-00001-of-00001.safetensors")
    _index(tmp_path, "a.safetensors.index.fp16.json", "a-00001-of-00001.safetensors")
    with pytest.raises(AmbiguousCheckpointError) as e:
        open_checkpoint(tmp_path)
    assert sorted(e.value.choices) == sorted(
        str(tmp_path / n) for n in ("a.safetensors.index.json", "a.safetensors.index.fp16.json")
    )
