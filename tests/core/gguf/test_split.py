"""A GGUF split series opens as one checkpoint from any of its parts, and casts to one file."""

from __future__ import annotations

import os

import gguf
import numpy as np
import pytest
from safetensors.numpy import load_file

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job


def series(tmp_path, n_tensors=5):
    w = gguf.GGUFWriter(str(tmp_path / "m.gguf"), "llama", split_max_tensors=2)
    w.add_block_count(1)
    for i in range(n_tensors):
        w.add_tensor(f"blk.0.t{i}.weight", np.full((4, 32), i, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return sorted(p for p in tmp_path.iterdir() if p.suffix == ".gguf")


def test_any_part_opens_the_series(tmp_path):
    parts = series(tmp_path)
    assert [p.name for p in parts] == [f"m-0000{i}-of-00003.gguf" for i in (1, 2, 3)]
    for part in parts:
        with open_checkpoint(part) as ckpt:
            assert [t.name for t in ckpt.tensors] == [f"blk.0.t{i}.weight" for i in range(5)]
            assert ckpt.view("blk.0.t4.weight").tolist() == [[4.0] * 32] * 4


def test_a_cast_writes_one_file(tmp_path):
    parts = series(tmp_path)
    (tmp_path / "out").mkdir()
    with open_checkpoint(parts[1]) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(tmp_path / "out")))
    assert os.listdir(tmp_path / "out") == ["m.safetensors"]
    got = load_file(str(tmp_path / "out" / "m.safetensors"))
    assert len(got) == 5 and got["blk.0.t3.weight"].dtype == np.float16


def test_a_series_of_two_parts_casts_to_one_file_too(tmp_path):
    parts = series(tmp_path, n_tensors=4)
    assert [p.name for p in parts] == ["m-00001-of-00002.gguf", "m-00002-of-00002.gguf"]
    with open_checkpoint(parts[0]) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(tmp_path / "one.safetensors")))
    got = load_file(str(tmp_path / "one.safetensors"))
    assert sorted(got) == [f"blk.0.t{i}.weight" for i in range(4)]
    assert got["blk.0.t3.weight"].tolist() == [[3.0] * 32] * 4


def test_a_missing_part_is_named(tmp_path):
    parts = series(tmp_path)
    parts[2].unlink()
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(parts[0])
    assert (e.value.path, e.value.reason) == (
        str(parts[0]),  # the part the user opened, not the missing one
        "its split series is incomplete: m-00003-of-00003.gguf is missing",
    )


def test_a_folder_of_one_series_opens_it_from_its_first_part(tmp_path):
    """llama.cpp's split series is one model: its folder opens it as one checkpoint, read from
    part 1 whichever part sorts first."""
    parts = series(tmp_path)
    with open_checkpoint(tmp_path) as ckpt:
        assert ckpt.path == str(parts[0]) and ckpt.folder == str(tmp_path)
        assert [t.name for t in ckpt.tensors] == [f"blk.0.t{i}.weight" for i in range(5)]


def test_a_folder_of_a_series_and_another_gguf_asks_which(tmp_path):
    """A series beside an unrelated GGUF is two models: the folder does not choose."""
    from inspector.core.errors import AmbiguousCheckpointError
    from tests.gguf_files import write_gguf

    parts = series(tmp_path)
    write_gguf(tmp_path / "other.gguf", {"w": (np.zeros((2, 32), np.float32), None)})
    with pytest.raises(AmbiguousCheckpointError) as e:
        open_checkpoint(tmp_path)
    assert e.value.reason == "folder holds 4 Burnpack or GGUF files; open one file"
    assert sorted(e.value.choices) == sorted(map(str, [*parts, tmp_path / "other.gguf"]))
