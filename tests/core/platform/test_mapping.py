"""MAP_POPULATE and madvise: asked for where there are, never called where switched off."""

from __future__ import annotations

import mmap

import pytest

from inspector.core.errors import CheckpointError
from inspector.core.platform import mapping
from inspector.core.platform.facilities import WITHOUT_ENV


def test_populate_only_where_allowed(tmp_path, monkeypatch):
    (tmp_path / "f").write_bytes(bytes(range(256)) * 64)
    flags = []
    real = mmap.mmap
    monkeypatch.setattr(
        mmap, "mmap", lambda *a, **k: (flags.append(k.get("flags")), real(*a, **k))[1]
    )
    populate = getattr(mmap, "MAP_POPULATE", 0)
    with open(tmp_path / "f", "rb") as f:
        monkeypatch.delenv(WITHOUT_ENV, raising=False)
        with mapping.read_only_map(f.fileno(), 4096, 4096) as m:
            assert m[:3] == bytes([0, 1, 2])
        monkeypatch.setenv(WITHOUT_ENV, "populate")
        with mapping.read_only_map(f.fileno(), 4096, 4096) as m:
            assert m[:3] == bytes([0, 1, 2])
    assert flags == [mmap.MAP_SHARED | populate, mmap.MAP_SHARED]


def test_a_system_without_map_populate_maps_plainly(tmp_path, monkeypatch):
    """macOS has MAP_SHARED but no MAP_POPULATE: the map is made without it, not refused."""
    (tmp_path / "f").write_bytes(bytes(range(256)) * 64)
    flags = []
    real = mmap.mmap
    monkeypatch.setattr(
        mmap, "mmap", lambda *a, **k: (flags.append(k.get("flags")), real(*a, **k))[1]
    )
    monkeypatch.delattr(mmap, "MAP_POPULATE", raising=False)
    monkeypatch.delenv(WITHOUT_ENV, raising=False)
    with open(tmp_path / "f", "rb") as f, mapping.read_only_map(f.fileno(), 4096, 4096) as m:
        assert m[:3] == bytes([0, 1, 2])
    assert flags == [mmap.MAP_SHARED]


class _Map:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int, int]] = []

    def __len__(self) -> int:
        return 10 * mmap.PAGESIZE

    def madvise(self, advice: int, start: int, length: int) -> None:
        self.calls.append((advice, start, length))


def test_release_pages_rounds_to_pages_and_stops_at_the_map(monkeypatch):
    monkeypatch.delenv(WITHOUT_ENV, raising=False)
    m = _Map()
    mapping.release_pages(m, mmap.PAGESIZE + 5, 100 * mmap.PAGESIZE)
    assert m.calls == [(mmap.MADV_DONTNEED, mmap.PAGESIZE, 9 * mmap.PAGESIZE)]
    monkeypatch.setenv(WITHOUT_ENV, "madvise")
    mapping.release_pages(m, 0, mmap.PAGESIZE)
    assert len(m.calls) == 1


def _cast_over(src, out) -> None:
    from inspector.core.cast.job import cast_checkpoint
    from inspector.core.dtypes import DTYPES
    from inspector.core.opening import open_checkpoint
    from inspector.core.progress import run_job

    with open_checkpoint(src) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(out)))


@pytest.fixture
def shown(tmp_path, monkeypatch):
    """An output the program has open and mapped (the window showing it), then cast over,
    where a mapped file cannot be replaced (Windows)."""
    import numpy as np

    from inspector.core.dtypes import DTYPES
    from inspector.core.opening import open_checkpoint
    from inspector.core.save.writer import save_arrays

    monkeypatch.setenv(WITHOUT_ENV, "replace_mapped")
    src, out = tmp_path / "src.safetensors", tmp_path / "out.safetensors"
    save_arrays(src, [("w", DTYPES["F32"], np.arange(4, dtype=np.float32))])
    save_arrays(out, [("w", DTYPES["F32"], np.full(4, 7, dtype=np.float32))])
    with open_checkpoint(out) as ckpt:
        yield src, out, ckpt


def test_a_mapped_destination_is_closed_before_the_commit(shown):
    src, out, ckpt = shown
    assert float(ckpt.view("w")[0]) == 7.0  # mapped; the view is gone after this line
    assert ckpt._maps
    _cast_over(src, out)
    assert not ckpt._maps  # closed before the rename, as Windows needs
    with pytest.raises(CheckpointError, match="changed on disk since it was opened"):
        ckpt.view("w")


def test_a_destination_still_in_use_is_refused_before_the_commit(shown, tmp_path):
    src, out, ckpt = shown
    before = out.read_bytes()
    in_use = ckpt.view("w")
    with pytest.raises(CheckpointError) as e:
        _cast_over(src, out)
    assert (e.value.path, e.value.reason) == (
        str(out),
        "is open in this program (one of its tensors is in use), and this system does not let "
        "an open file be replaced; close it, then save again",
    )
    assert out.read_bytes() == before and float(in_use[0]) == 7.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.safetensors", "src.safetensors"]
    del in_use
