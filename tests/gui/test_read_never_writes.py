"""Opening a downloaded folder in the window changes nothing on disk and runs nothing: a save
journal left there (planted or forged) is shown as a warning, never replayed."""

from __future__ import annotations

import os

import pytest

from tests.hostile_folders import build, snapshot

pytestmark = pytest.mark.skipif(os.name != "posix", reason="journals need flock")


@pytest.mark.parametrize("forged", [False, True], ids=["downloaded", "forged-as-ours"])
def test_opening_the_folder_writes_nothing_and_says_why(qtbot, window, tmp_path, forged):
    canary = tmp_path / "canary"
    folder, outside = build(tmp_path, canary, forged=forged)
    before = snapshot(folder, outside)
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(folder))
    assert snapshot(folder, outside) == before
    assert not canary.exists()
    assert window.message_bar.isVisible() and window.message_bar.kind == "warning"
    assert "interrupted save left" in window.message_bar.text
