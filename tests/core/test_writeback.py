"""The background writer writes each queued chunk in order, and hands a file's written range to
the kernel's writeback a ``KICK_BYTES`` step at a time, each step waiting for the one before it,
so a large save keeps the page cache bounded instead of one huge flush at fsync."""

from __future__ import annotations

import numpy as np

from inspector.core.save import writeback
from inspector.core.save.pending_file import PendingFile
from inspector.core.save.writeback import BackgroundWriter


def test_write_behind_ranges_follow_each_other_a_step_apart(tmp_path, monkeypatch):
    monkeypatch.setattr(writeback, "KICK_BYTES", 4096)
    monkeypatch.setattr(writeback, "can_write_behind", lambda: True)
    calls = []
    monkeypatch.setattr(writeback, "write_behind", lambda fd, *r: calls.append(r))
    chunks = [np.full(4096, i, np.uint8) for i in range(5)]
    chunks += [np.full(2048, 9, np.uint8), [np.zeros(1024, np.uint8), np.ones(1024, np.uint8)]]
    chunks += [np.full(100, 7, np.uint8)]
    f = PendingFile(str(tmp_path / "out.bin"))
    bg = BackgroundWriter()
    try:
        for c in chunks:
            bg.put(f, c)
        bg.close()
        with open(f.tmp_path, "rb") as written:
            data = written.read()
    finally:
        bg.stop()
        f.discard()
    flat = [c for chunk in chunks for c in (chunk if isinstance(chunk, list) else [chunk])]
    assert data == b"".join(c.tobytes() for c in flat)
    # (start, end, older): the new range handed over, the range before it waited for and dropped
    assert calls == [
        (0, 4096, 0),
        (4096, 8192, 0),
        (8192, 12288, 4096),
        (12288, 16384, 8192),
        (16384, 20480, 12288),
        (20480, 24576, 16384),  # the 2 KiB chunk and the list of two made the sixth step
    ]
