"""The session's rules, without Qt: a reference belongs to its checkpoint, stale results are
refused, an overwritten file is a new file for the caches, events say what changed."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from inspector.core.cast.job import cast_checkpoint
from inspector.core.diff import diff_checkpoints
from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.save.writer import save_arrays
from inspector.core.status import DiffStatus, TensorStatus
from inspector.session import MemorySettings, RecentFiles, Session

F32, F64, F16 = DTYPES["F32"], DTYPES["F64"], DTYPES["F16"]


@pytest.fixture
def files(tmp_path):
    a, r, b = tmp_path / "a.safetensors", tmp_path / "r.safetensors", tmp_path / "b.safetensors"
    save_arrays(a, [("w", F64, np.arange(8) / 4), ("ids", DTYPES["I64"], np.arange(3))])
    save_arrays(r, [("w", F32, np.arange(8, dtype=np.float32) / 4)])
    save_arrays(b, [("other", F32, np.ones(2, np.float32))])
    return a, r, b


class Recorder:
    def __init__(self, session: Session) -> None:
        self.log: list[tuple[str, object]] = []
        ev = session.events
        for e in (
            ev.checkpoint_changed,
            ev.target_changed,
            ev.reference_changed,
            ev.diffs_changed,
            ev.cast_changed,
            ev.selection_changed,
        ):
            e.connect(lambda *args, n=e.name: self.log.append((n, args[0] if args else None)))

    def names(self) -> list[str]:
        return [n for n, _ in self.log]


def test_a_reference_belongs_to_the_checkpoint_it_was_chosen_for(files):
    a, r, b = files
    s = Session(F32)
    s.open(open_checkpoint(a))
    ref = open_checkpoint(r)
    s.set_reference(ref)
    diffs = run_job(diff_checkpoints(s.checkpoint, ref))
    assert s.accept_diffs(diffs, s.checkpoint, ref)
    assert s.diff_summary.count(DiffStatus.DTYPE_ONLY) == 1
    rec = Recorder(s)
    dropped = s.open(open_checkpoint(b))
    assert dropped is ref  # the window offers "compare again"
    assert s.reference is None and s.diffs is None and s.diff_by_name == {}
    assert rec.names() == ["checkpoint_changed", "reference_changed", "diffs_changed"]


def test_diffs_for_another_checkpoint_or_reference_are_refused(files):
    a, r, b = files
    s = Session(F32)
    s.open(open_checkpoint(a))
    ref = open_checkpoint(r)
    s.set_reference(ref)
    old_a = s.checkpoint
    diffs = run_job(diff_checkpoints(old_a, ref))
    s.open(open_checkpoint(b))  # the person moved on while the diff ran
    assert not s.accept_diffs(diffs, old_a, ref)
    assert s.diffs is None
    s.set_reference(open_checkpoint(r))
    assert not s.accept_diffs(diffs, s.checkpoint, ref)  # an older reference's result


def test_cast_of_a_checkpoint_no_longer_shown_is_refused(files, tmp_path):
    a, _, b = files
    s = Session(F32)
    s.open(open_checkpoint(a))
    src = s.checkpoint
    report = run_job(cast_checkpoint(src, F16, str(tmp_path / "o.safetensors")))
    assert s.accept_cast(report, str(tmp_path / "o.safetensors"), src)
    assert s.cast.by_name["w"].to == "F16"
    assert s.cast.output.get()["w"].dtype.name == "F16"
    s.open(open_checkpoint(b))
    assert s.cast is None
    assert not s.accept_cast(report, str(tmp_path / "o.safetensors"), src)


def test_an_overwritten_file_gets_a_new_stats_key(files):
    a, _, _ = files
    s = Session(F32)
    s.open(open_checkpoint(a))
    key = s.stats_key(s.checkpoint["w"])
    s.stats_cache.put(key, "stats of the old file")
    time.sleep(0.01)
    save_arrays(a, [("w", F64, np.linspace(5, 9, 8)), ("ids", DTYPES["I64"], np.arange(3))])
    s.open(open_checkpoint(a))
    new_key = s.stats_key(s.checkpoint["w"])
    assert new_key != key and s.stats_cache.get(new_key) is None
    assert new_key[0].path == key[0].path == os.fspath(a)


def test_target_status_and_selection_events(files):
    a, _, _ = files
    s = Session(F32)
    s.open(open_checkpoint(a))
    rec = Recorder(s)
    w = s.checkpoint["w"]
    assert s.status_of(w) is TensorStatus.DIFFERS and s.summary.n_differ == 1
    assert s.set_target(F64) and not s.set_target(F64)
    assert s.status_of(w) is TensorStatus.MATCH and s.summary.n_differ == 0
    assert s.status_of(s.checkpoint["ids"]) is TensorStatus.KEPT
    assert s.select(w) and not s.select(w)
    assert rec.log == [("target_changed", F64), ("selection_changed", w)]


def test_clearing_the_reference_drops_its_diffs(files):
    a, r, _ = files
    s = Session(F32)
    s.open(open_checkpoint(a))
    ref = open_checkpoint(r)
    s.set_reference(ref)
    assert s.accept_diffs(run_job(diff_checkpoints(s.checkpoint, ref)), s.checkpoint, ref)
    s.clear_reference()
    assert s.reference is None and s.diffs is None and s.diff_summary is None


def test_recent_files_most_recent_first_without_duplicates():
    recent = RecentFiles(MemorySettings())
    for p in ["/a", "/b", "/a", *(f"/x{i}" for i in range(12))]:
        recent.add(p)
    paths = recent.paths()
    assert paths[0] == "/x11" and len(paths) == 10 and len(set(paths)) == 10
    settings = MemorySettings()
    settings.setValue("recent", "/only")  # QSettings' lone string
    assert RecentFiles(settings).paths() == ["/only"]


def test_keep_globs_are_remembered_per_checkpoint():
    from inspector.session import KeepGlobs

    settings = MemorySettings()
    keep = KeepGlobs(settings)
    keep.set("/models/a", "*.norm.weight lm_head*")
    assert keep.get("/models/a") == "*.norm.weight lm_head*"
    assert keep.get("/models/b") == ""  # never carried over to another file
    keep.set("/models/a", "")
    assert keep.get("/models/a") == ""
    settings.setValue(KeepGlobs.KEY, "{not json")
    assert KeepGlobs(settings).get("/models/a") == ""


def test_a_cast_of_the_file_as_it_was_is_refused_after_the_path_is_reopened(files, tmp_path):
    """Same path, new contents: the cast report belongs to the old checkpoint, not the new one
    (a path comparison would show the old report next to the new file's tensors)."""
    a, _, _ = files
    s = Session(F32)
    s.open(open_checkpoint(a))
    src = s.checkpoint
    report = run_job(cast_checkpoint(src, F16, str(tmp_path / "o.safetensors")))
    save_arrays(a, [("renamed", F32, np.zeros(5, np.float32))])  # overwritten in place
    s.open(open_checkpoint(a))
    assert s.path == src.path
    assert not s.accept_cast(report, str(tmp_path / "o.safetensors"), src)
    assert s.cast is None
