"""Every malformed GGUF header is refused with its own one line, in bounded memory."""

from __future__ import annotations

import tracemalloc

import pytest

from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from tests.malformed.gguf_corpus import CASES


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_refused_with_one_line(tmp_path, case):
    path = tmp_path / "m.gguf"
    path.write_bytes(case.build())
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError) as e:
            open_checkpoint(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (e.value.path, e.value.reason) == (str(path), case.reason)
    assert "\n" not in str(e.value)
    assert peak < 64 << 20  # no allocation from a count the file claims
