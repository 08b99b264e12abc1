"""Without liveness locks a leftover is never guessed at (kept, never deleted); without hard
links a commit's backup is a copy, and a failed rename still puts the old set back."""

from __future__ import annotations

import os

import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.platform import links, locks
from inspector.core.platform.facilities import WITHOUT_ENV
from inspector.core.save.writer import AtomicWriter, clean_leftovers, save_arrays


def test_without_locks_a_dead_saves_leftover_is_kept_and_the_save_still_works(
    tmp_path, monkeypatch
):
    monkeypatch.setenv(WITHOUT_ENV, "flock")
    stale = tmp_path / ".old.safetensors.ba9876543210.partial"
    stale.write_bytes(b"half a file")  # a dead save's, or a live one's: no way to tell
    save_arrays(tmp_path / "new.safetensors", [("w", DTYPES["F32"], np.ones(3, np.float32))])
    assert clean_leftovers(str(tmp_path)) == []
    assert stale.read_bytes() == b"half a file"
    assert sorted(os.listdir(tmp_path)) == [stale.name, "new.safetensors"]
    assert not locks.can_tell_liveness()


def test_without_locks_nothing_is_locked(tmp_path, monkeypatch):
    monkeypatch.setenv(WITHOUT_ENV, "flock")
    with open(tmp_path / "f", "wb") as f:
        assert locks.hold(f.fileno()) is False and locks.try_take(f.fileno()) is False
    monkeypatch.delenv(WITHOUT_ENV)
    with open(tmp_path / "f", "wb") as f, open(tmp_path / "f", "rb") as g:
        assert locks.hold(f.fileno()) is True
        assert locks.try_take(g.fileno()) is False  # held: a live save


def test_without_hard_links_the_backup_is_a_copy(tmp_path, monkeypatch):
    monkeypatch.setenv(WITHOUT_ENV, "link")
    (tmp_path / "a").write_bytes(b"old bytes")
    assert links.keep_backup(str(tmp_path / "a"), str(tmp_path / "b"))
    assert (tmp_path / "b").read_bytes() == b"old bytes"
    assert os.stat(tmp_path / "a").st_nlink == 1  # a copy, not a link


def _commit_failing_at_the_second_rename(tmp_path, monkeypatch) -> dict[str, bytes]:
    """Two outputs replacing two files; the second rename fails. Returns the old bytes."""
    for name in ("x", "y"):
        save_arrays(tmp_path / name, [("w", DTYPES["F32"], np.ones(3, np.float32))])
    old = {n: (tmp_path / n).read_bytes() for n in ("x", "y")}
    real, seen = os.replace, []

    def replace(a, b):
        seen.append(b)
        if len(seen) == 2:  # the second output's rename fails: the first must come back
            raise OSError(5, "Input/output error")
        real(a, b)

    monkeypatch.setattr(os, "replace", replace)
    with (
        pytest.raises(CheckpointError, match="cannot replace"),
        AtomicWriter(root=str(tmp_path)) as w,
    ):
        for n in ("x", "y"):
            w.open(str(tmp_path / n)).write(b"new")
        w.commit()
    monkeypatch.undo()
    return old


def test_without_hard_links_a_failed_rename_puts_the_old_set_back(tmp_path, monkeypatch):
    monkeypatch.setenv(WITHOUT_ENV, "link")
    old = _commit_failing_at_the_second_rename(tmp_path, monkeypatch)
    assert {n: (tmp_path / n).read_bytes() for n in ("x", "y")} == old
    assert sorted(os.listdir(tmp_path)) == ["x", "y"]


def test_a_file_nothing_could_back_up_keeps_its_new_bytes_rather_than_none(tmp_path, monkeypatch):
    """A full disk refuses the copy too: the roll-back cannot restore x, and must not delete it."""
    monkeypatch.setattr(links, "keep_backup", lambda path, backup: False)
    old = _commit_failing_at_the_second_rename(tmp_path, monkeypatch)
    assert (tmp_path / "x").read_bytes() == b"new" and (tmp_path / "y").read_bytes() == old["y"]
    assert sorted(os.listdir(tmp_path)) == ["x", "y"]
