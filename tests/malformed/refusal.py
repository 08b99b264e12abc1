"""Open a malformed file and return how it was refused, with the memory the attempt took."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint


def refusal(path: Path) -> tuple[CheckpointError, int]:
    """The CheckpointError opening ``path`` raises (the test fails if none is), and the peak
    bytes Python allocated meanwhile."""
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError) as e:
            open_checkpoint(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return e.value, peak
