"""MAP_POPULATE and madvise: asked for where there are, never called where switched off."""

from __future__ import annotations

import mmap

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
