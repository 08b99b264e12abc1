"""How a cast moves its bytes: outputs small and large reach the file in the file's order."""

from __future__ import annotations

import os

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job


def test_a_large_output_after_small_ones_lands_after_them(tmp_path):
    """Small outputs wait in a batch (4 MiB); an output as large as that, queued behind them,
    must still be written after them: b's 4 MiB of F16 follows a's 10 bytes, and c follows b."""
    rng = np.random.default_rng(7)
    tensors = {
        "a": np.arange(5, dtype=np.float32),
        "b": rng.standard_normal(2 << 20).astype(np.float32),  # one 8 MiB chunk: 4 MiB out
        "c": np.array([0.5, -2.0], np.float32),
    }
    save_file(tensors, str(tmp_path / "m.safetensors"))
    out = tmp_path / "o.safetensors"
    with open_checkpoint(str(tmp_path / "m.safetensors")) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(out), report=False, processes=0))
    cast = load_file(str(out))
    for name, values in tensors.items():
        assert np.array_equal(cast[name], values.astype(np.float16)), name


@pytest.mark.parametrize("processes", [0, 2])
def test_a_source_cut_short_during_a_cast_is_named_and_nothing_is_written(tmp_path, processes):
    """The file shrinks on disk after the cast has read its first tensor (another program
    rewriting it): the cast stops with the source's name and reason, and no output appears."""
    src, out = tmp_path / "m.safetensors", tmp_path / "o.safetensors"
    save_file({f"t{i}": np.full(1 << 18, i, np.float32) for i in range(4)}, str(src))
    with open_checkpoint(str(src)) as ckpt:
        job = cast_checkpoint(ckpt, DTYPES["F16"], str(out), report=False, processes=processes)
        next(job)
        os.truncate(src, src.stat().st_size // 2)
        with pytest.raises(CheckpointError) as caught:
            for _ in job:
                pass
    assert caught.value.path == str(src)
    assert caught.value.reason == "file is shorter than its header says (truncated while reading)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.safetensors"]


class _Writes:
    """Stands in for the background writer: records what each hand-off carried."""

    def __init__(self) -> None:
        self.puts: list[list[int]] = []

    def put(self, f: object, data: np.ndarray | list[np.ndarray] | int) -> None:
        items = data if isinstance(data, list) else [data]
        self.puts.append([x if isinstance(x, int) else x.nbytes for x in items])


def test_small_outputs_go_to_the_writer_together_once_they_reach_the_limit():
    """Memory: the batch never holds more than its limit. Hand-offs: small outputs are not
    sent one by one, and a batch is emptied once handed off."""
    from inspector.core.cast.stream import OutputBatch

    writes = _Writes()
    batch = OutputBatch(writes, None, limit=4096)
    for n in (1000, 1000, 1000, 1095):  # 4095 bytes: one short of the limit
        batch.add(np.zeros(n, np.uint8))
    assert writes.puts == []
    batch.add(np.zeros(1, np.uint8))  # exactly the limit
    assert writes.puts == [[1000, 1000, 1000, 1095, 1]]
    for n in (2000, 2095):  # the next batch starts from nothing
        batch.add(np.zeros(n, np.uint8))
    assert len(writes.puts) == 1
    batch.add(np.zeros(1, np.uint8))
    assert writes.puts[1:] == [[2000, 2095, 1]]


def test_a_large_output_or_a_workers_range_goes_after_what_is_batched():
    from inspector.core.cast.stream import OutputBatch

    writes = _Writes()
    batch = OutputBatch(writes, None, limit=4096)
    batch.add(np.zeros(4096, np.uint8))  # nothing batched: it goes on its own
    batch.add(np.zeros(10, np.uint8))
    batch.add(12_345)  # bytes a worker process wrote in place: the batch goes first
    batch.add(np.zeros(20, np.uint8))
    batch.flush()
    batch.flush()  # nothing left: no empty hand-off
    assert writes.puts == [[4096], [10], [12_345], [20]]


def test_a_large_first_output_goes_out_on_its_own(tmp_path):
    """Nothing batched yet: a 4 MiB output is handed to the writer alone, for the same file."""
    rng = np.random.default_rng(3)
    tensors = {
        "big": rng.standard_normal(2 << 20).astype(np.float32),
        "small": np.arange(3, dtype=np.float32),
    }
    save_file(tensors, str(tmp_path / "m.safetensors"))
    out = tmp_path / "o.safetensors"
    with open_checkpoint(str(tmp_path / "m.safetensors")) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(out), report=False, processes=0))
    cast = load_file(str(out))
    assert list(cast) == ["big", "small"]
    for name, values in tensors.items():
        assert np.array_equal(cast[name], values.astype(np.float16)), name
