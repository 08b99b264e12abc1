"""glibc's allocator told to keep what a preview worker frees; switched off, nothing is asked."""

from __future__ import annotations

import sys

import pytest

from inspector.core.platform.facilities import WITHOUT_ENV
from inspector.core.platform.memory import keep_freed_memory


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc")
def test_glibc_takes_the_settings(monkeypatch) -> None:
    monkeypatch.delenv(WITHOUT_ENV, raising=False)
    assert keep_freed_memory() is True


def test_switched_off_nothing_is_asked(monkeypatch) -> None:
    import ctypes

    monkeypatch.setenv(WITHOUT_ENV, "mallopt")
    monkeypatch.setattr(ctypes, "CDLL", lambda *a: pytest.fail("mallopt was called"))
    assert keep_freed_memory() is False
