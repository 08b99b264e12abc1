"""The cycle collector off while many small acyclic objects are built (a 200k-tensor header
being decoded, a 200k-row listing being written): its collections only cost time there."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection inside the block; the collector's previous state after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
