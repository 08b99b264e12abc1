"""A file replaced or rewritten under the same name and size after it was opened (or while its
pickle was being parsed) is refused: its bytes are not the ones the header describes. Only the
size was compared before, so ``cast`` wrote the replacement's bytes under the original's names."""

from __future__ import annotations

import os

import numpy as np
import pytest

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.save.writer import save_arrays

from inspector.core import opening  # isort: skip - after checkpoint, which it imports

F32, F16 = DTYPES["F32"], DTYPES["F16"]


def _save(path, value: float) -> None:
    save_arrays(path, [("w", F32, np.full(1024, value, dtype=np.float32))])


def _replace_same_size(path, value: float, in_place: bool) -> None:
    other = path.with_name("other.safetensors")
    _save(other, value)
    if in_place:  # same inode, same size: only the modification time tells
        st = os.stat(path)
        path.write_bytes(other.read_bytes())
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        other.unlink()
    else:
        os.replace(other, path)


@pytest.mark.parametrize("in_place", [False, True], ids=["renamed-over", "rewritten"])
@pytest.mark.parametrize("use", ["view", "chunks", "cast"])
def test_a_same_size_replacement_after_open_is_refused(tmp_path, in_place, use):
    path = tmp_path / "m.safetensors"
    _save(path, 1.0)
    with open_checkpoint(path) as ckpt:
        _replace_same_size(path, 2.0, in_place)
        with pytest.raises(CheckpointError, match="changed on disk"):
            if use == "view":
                ckpt.view("w")
            elif use == "chunks":
                list(ckpt.iter_chunks(ckpt["w"]))
            else:
                run_job(cast_checkpoint(ckpt, F16, str(tmp_path / "out.safetensors")))
    assert not (tmp_path / "out.safetensors").exists()


def test_a_replacement_while_the_file_is_parsed_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "m.safetensors"
    _save(path, 1.0)
    real = opening.read_file

    def read_then_replaced(p):
        header = real(p)
        _replace_same_size(path, 2.0, in_place=False)
        return header

    monkeypatch.setattr(opening, "read_file", read_then_replaced)
    with pytest.raises(CheckpointError, match="changed on disk while it was being read"):
        open_checkpoint(path)


def test_an_unchanged_file_reads_as_before(tmp_path):
    path = tmp_path / "m.safetensors"
    _save(path, 1.0)
    with open_checkpoint(path) as ckpt:
        assert ckpt.view("w")[0] == 1.0
        run_job(cast_checkpoint(ckpt, F16, str(tmp_path / "out.safetensors")))
    with open_checkpoint(tmp_path / "out.safetensors") as out:
        assert out.view("w").dtype == np.float16 and out.view("w")[0] == 1.0
