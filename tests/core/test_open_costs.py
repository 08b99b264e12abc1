"""Reliability round 2, hangs and bounds: opening costs what the index names, a sharded cast
keeps a bounded number of files open, HF variant indexes are found. Costs are asserted as
counts of file-system calls (deterministic), never as timings."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.errors import AmbiguousCheckpointError, CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.save.writer import TensorEntry, encode_header, save_arrays

F32 = DTYPES["F32"]


def many_shards(folder: Path, n: int) -> Path:
    """n one-tensor shards, written plainly (no fsync per file: a fixture, not a save)."""
    folder.mkdir(parents=True, exist_ok=True)
    weight_map = {}
    for i in range(1, n + 1):
        shard = f"model-{i:05d}-of-{n:05d}.safetensors"
        head = encode_header([TensorEntry(f"t{i}", F32, (2,))], None)
        (folder / shard).write_bytes(head + np.full(2, i, np.float32).tobytes())
        weight_map[f"t{i}"] = shard
    index = folder / "model.safetensors.index.json"
    index.write_text(json.dumps({"weight_map": weight_map}))
    return index


class SyscallCounter:
    """Counts stat/exists/listdir calls made while opening."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.n = 0
        for mod, name in ((os, "stat"), (os.path, "exists"), (os, "listdir"), (os.path, "isfile")):
            real = getattr(mod, name)

            def counted(*a, _real=real, **kw):
                self.n += 1
                return _real(*a, **kw)

            monkeypatch.setattr(mod, name, counted)


def test_a_name_claiming_999999_siblings_costs_one_listing(tmp_path, monkeypatch):
    """6: the series check walked 1..999999 with a stat each (7-9 s; 50 names: 8 minutes)."""
    save_arrays(tmp_path / "m-000001-of-999999.safetensors", [("x", F32, np.ones(2, np.float32))])
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(
        json.dumps(
            {"weight_map": {f"x{i}": f"p{i}-000001-of-999999.safetensors" for i in range(50)}}
        )
    )
    counter = SyscallCounter(monkeypatch)
    with pytest.raises(CheckpointError, match="missing"):
        open_checkpoint(index)
    assert counter.n < 20


def test_3000_shards_open_with_linear_file_system_calls(tmp_path, monkeypatch):
    """6: a valid 3000-shard checkpoint took 6.7 s (every shard re-walked the whole weight map)."""
    index = many_shards(tmp_path / "ckpt", 3000)
    counter = SyscallCounter(monkeypatch)
    with open_checkpoint(index) as ckpt:
        assert len(ckpt) == 3000 and len(ckpt.files) == 3000
        assert ckpt["t2999"].file.endswith("model-02999-of-03000.safetensors")
    assert counter.n <= 3 * 3000


def test_tens_of_thousands_of_shard_names_are_collected_linearly(tmp_path):
    """7: `in` on a list made 40k names take 11 s (quadratic). Run in a child, bounded."""
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(
        json.dumps({"weight_map": {f"t{i}": f"s{i:06d}.safetensors" for i in range(200_000)}})
    )
    code = textwrap.dedent(
        f"""
        from inspector.core.opening import open_checkpoint
        from inspector.core.errors import CheckpointError
        try:
            open_checkpoint({str(index)!r})
        except CheckpointError as e:
            print(e.reason)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,  # a bound on a hang: collecting 200k names quadratically takes many minutes
        env=dict(os.environ, PYTHONPATH=os.getcwd()),
    ).stdout
    assert out.strip() == "shard 's000000.safetensors' named in the index is missing"


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_NOFILE is POSIX")
def test_sharded_cast_under_a_low_open_file_limit(tmp_path):
    """8: every output shard stayed open until the commit: 1100 shards failed at ulimit -n 1024."""
    index = many_shards(tmp_path / "in", 300)
    code = textwrap.dedent(
        f"""
        import resource
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        from inspector.core.opening import open_checkpoint
        from inspector.core.cast.job import cast_checkpoint
        from inspector.core.dtypes import DTYPES
        from inspector.core.progress import run_job
        with open_checkpoint({str(index)!r}) as ckpt:
            run_job(cast_checkpoint(ckpt, DTYPES["F16"], {str(tmp_path / "out")!r}))
        """
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=os.getcwd()),
    )
    assert p.returncode == 0, p.stderr[-2000:]
    with open_checkpoint(tmp_path / "out") as ckpt:
        assert len(ckpt) == 300 and {t.dtype.name for t in ckpt.tensors} == {"F16"}


# -- 15. HF variants ---------------------------------------------------------------------------


def test_variant_index_is_found_in_a_folder_and_a_cast_output_reopens(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    for i in (1, 2):
        save_arrays(
            folder / f"model.fp16-0000{i}-of-00002.safetensors",
            [(f"t{i}", DTYPES["F16"], np.ones(2, np.float16))],
        )
    (folder / "model.safetensors.index.fp16.json").write_text(
        json.dumps(
            {
                "weight_map": {
                    "t1": "model.fp16-00001-of-00002.safetensors",
                    "t2": "model.fp16-00002-of-00002.safetensors",
                }
            }
        )
    )
    from inspector.core.cast.job import cast_checkpoint
    from inspector.core.progress import run_job

    with open_checkpoint(folder) as ckpt:
        assert len(ckpt) == 2
        run_job(cast_checkpoint(ckpt, F32, str(tmp_path / "out")))
    with open_checkpoint(tmp_path / "out") as out:  # the tool reopens its own output
        assert {t.dtype.name for t in out.tensors} == {"F32"}


def test_folder_with_several_indexes_names_them_and_offers_the_choice(tmp_path):
    many_shards(tmp_path, 2)
    (tmp_path / "model.safetensors.index.fp16.json").write_text(
        (tmp_path / "model.safetensors.index.json").read_text()
    )
    with pytest.raises(AmbiguousCheckpointError) as err:
        open_checkpoint(tmp_path)
    assert "model.safetensors.index.fp16.json" in err.value.reason
    assert sorted(os.path.basename(c) for c in err.value.choices) == [
        "model.safetensors.index.fp16.json",
        "model.safetensors.index.json",
    ]


def test_a_plain_header_is_read_by_the_fast_path_alone(tmp_path, monkeypatch):
    """The careful parser words refusals; a well-formed header (the 200k-tensor case) must never
    reach it: it costs seconds where msgspec costs 0.1 s."""
    import numpy as np
    from safetensors.numpy import save_file

    from inspector.core.formats.safetensors import reader

    path = tmp_path / "m.safetensors"
    save_file(
        {f"layer.{i}.w": np.zeros((2, 3), np.float32) for i in range(50)},
        str(path),
        metadata={"format": "pt"},
    )

    def careful(*_a, **_k):
        raise AssertionError("the careful parser read a plain header")

    monkeypatch.setattr(reader, "parse_header_text", careful)
    header = reader.read_header(str(path))
    assert len(header.tensors) == 50 and header.metadata == {"format": "pt"}
    assert header.data_start == 8 + struct.unpack("<Q", path.read_bytes()[:8])[0]
    assert header.file_size == path.stat().st_size
    assert header.by_name is not None and header.by_name["layer.7.w"].shape == (2, 3)
