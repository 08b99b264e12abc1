"""How long a window test waits for a signal: generous by default (a loaded CI machine), scaled
down under mutation testing, where a mutant that stops a signal would otherwise make each of
its runs wait out the full time (``CHECKPOINT_INSPECTOR_TEST_WAIT_SCALE=0.25``, set by
``make mutate MUTATE_SET=gui``)."""

from __future__ import annotations

import os

SCALE = float(os.environ.get("CHECKPOINT_INSPECTOR_TEST_WAIT_SCALE", "1"))


def wait_ms(ms: int) -> int:
    """``ms`` scaled, at least three seconds (a loaded machine still answers in time)."""
    return max(3000, int(ms * SCALE))
