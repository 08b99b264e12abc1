"""What the session promises beyond its happy path, checked where mutation testing runs (no Qt):
accepted results are kept and announced with their values, opening never closes what is still
shown or handed back, the caller's groups and identities are used as given, a statistics key is
the identity the file had when it was opened, and the stores read what a settings backend gives.
Each test here killed a mutant of inspector/session/ that lived through the earlier tests."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inspector.core.cast.job import cast_checkpoint
from inspector.core.checkpoint import Checkpoint
from inspector.core.diff import diff_checkpoints
from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.save.writer import save_arrays
from inspector.core.summary import DTypeGroups
from inspector.core.target_rule import TargetSource
from inspector.session import FileIdentity, KeepGlobs, MemorySettings, ResultCache, Session
from inspector.session.session import LazyCheckpoint

F32, F64, F16, BF16 = DTYPES["F32"], DTYPES["F64"], DTYPES["F16"], DTYPES["BF16"]


@pytest.fixture
def files(tmp_path):
    a, r = tmp_path / "a.safetensors", tmp_path / "r.safetensors"
    save_arrays(a, [("w", F64, np.arange(8) / 4), ("ids", DTYPES["I64"], np.arange(3))])
    save_arrays(r, [("w", F32, np.arange(8, dtype=np.float32) / 4)])
    return a, r


def closes_of(*ckpts: Checkpoint) -> list[Checkpoint]:
    """Record every close() of these checkpoints (a closed checkpoint maps again on the next
    read, so reading it afterwards cannot tell whether it was closed under the view)."""
    closed: list[Checkpoint] = []
    for c in ckpts:
        real = c.close
        c.close = lambda c=c, real=real: (closed.append(c), real())[1]  # type: ignore[method-assign]
    return closed


def log_of(s: Session) -> list[tuple[str, object]]:
    log: list[tuple[str, object]] = []
    ev = s.events
    for e in (ev.reference_changed, ev.diffs_changed, ev.cast_changed, ev.target_changed):
        e.connect(lambda value, n=e.name: log.append((n, value)))
    return log


def test_accepted_diffs_are_kept_by_name_and_announced_with_their_values(files):
    a, r = files
    s = Session(F32)
    s.open(open_checkpoint(a))
    ref = open_checkpoint(r)
    s.set_reference(ref)
    log = log_of(s)
    diffs = run_job(diff_checkpoints(s.checkpoint, ref))
    assert s.accept_diffs(diffs, s.checkpoint, ref)
    assert s.diffs is diffs
    assert s.diff_by_name == {d.name: d for d in diffs} and set(s.diff_by_name) == {"w", "ids"}
    assert log == [("diffs_changed", diffs)]


def test_an_accepted_cast_is_kept_with_its_output_and_announced(files, tmp_path):
    a, _ = files
    s = Session(F32)
    s.open(open_checkpoint(a))
    log = log_of(s)
    first, second = str(tmp_path / "o1.safetensors"), str(tmp_path / "o2.safetensors")
    report = run_job(cast_checkpoint(s.checkpoint, F16, first))
    assert s.accept_cast(report, first, s.checkpoint)
    assert s.cast.output_path == first and s.cast.output.path == first
    assert log == [("cast_changed", s.cast)]
    earlier = s.cast
    report2 = run_job(cast_checkpoint(s.checkpoint, BF16, second))
    assert s.accept_cast(report2, second, s.checkpoint)
    assert s.cast.output_path == second and s.cast is not earlier
    assert log[1:] == [("cast_changed", None), ("cast_changed", s.cast)]


def test_reopening_the_shown_checkpoint_does_not_close_it(files):
    a, _ = files
    s = Session(F32)
    ckpt = open_checkpoint(a)
    closed = closes_of(ckpt)
    s.open(ckpt)
    s.open(ckpt)
    assert closed == [] and s.checkpoint is ckpt


def test_a_reference_that_is_the_shown_checkpoint_is_handed_back_open(files):
    a, r = files
    s = Session(F32)
    shown = open_checkpoint(a)
    closed = closes_of(shown)
    s.open(shown)
    s.set_reference(shown)  # compare a checkpoint with itself
    nxt = open_checkpoint(r)
    assert s.open(nxt) is shown  # returned for "compare again": it must still be usable
    assert closed == [] and s.reference is None


def test_opening_the_reference_shows_it_open_and_closes_the_old_checkpoint(files):
    a, r = files
    s = Session(F32)
    shown, ref = open_checkpoint(a), open_checkpoint(r)
    closed = closes_of(shown, ref)
    s.open(shown)
    s.set_reference(ref)
    assert s.open(ref) is ref  # the person opened the reference itself
    assert closed == [shown] and s.checkpoint is ref and s.reference is None


def test_choosing_the_same_reference_again_does_not_close_it(files):
    a, r = files
    s = Session(F32)
    s.open(open_checkpoint(a))
    ref = open_checkpoint(r)
    closed = closes_of(ref)
    s.set_reference(ref)
    s.set_reference(ref)
    assert closed == [] and s.reference is ref


def test_open_uses_the_groups_and_identities_it_is_given(files):
    a, _ = files
    s = Session(F32)
    ckpt = open_checkpoint(a)
    groups = DTypeGroups(ckpt.tensors)
    as_opened = FileIdentity(str(a), 1, 2, 3)  # measured by the worker that opened it
    identities = {str(a): as_opened}
    s.open(ckpt, groups=groups, identities=identities)
    assert s.groups is groups and s.identities is identities
    assert s.stats_key(ckpt["w"]) == (as_opened, "w")


def test_a_stats_key_is_the_identity_at_opening_even_after_the_file_changed(files):
    a, _ = files
    s = Session(F32)
    s.open(open_checkpoint(a))
    at_open = FileIdentity.of(str(a))
    save_arrays(a, [("w", F64, np.zeros(100))])  # overwritten: another size
    assert FileIdentity.of(str(a)) != at_open
    # results are keyed by the file the table shows, not by what is on disk now
    assert s.stats_key(s.checkpoint["w"]) == (at_open, "w")


def test_choosing_the_config_dtype_without_a_config_keeps_the_remembered_default(files):
    a, _ = files
    s = Session(F16)
    s.open(open_checkpoint(a))
    log = log_of(s)
    assert not s.choose_target(None)  # no config.json: the default stays
    assert (s.target, s.target_source, s.chosen_target) == (F16, TargetSource.DEFAULT, None)
    assert s.choose_target(BF16) and s.choose_target(None) is False
    assert (s.target, s.target_source, s.default_target) == (BF16, TargetSource.DEFAULT, BF16)
    assert log == [("target_changed", BF16)]


def test_a_lazy_checkpoint_closes_what_it_opened_and_opens_again(files):
    a, _ = files
    lazy = LazyCheckpoint(str(a))
    first = lazy.get()
    closed = closes_of(first)
    lazy.close()
    assert closed == [first]
    again = lazy.get()
    assert isinstance(again, Checkpoint) and again is not first
    assert again.view("w").tolist() == (np.arange(8) / 4).tolist()


def test_a_missing_file_has_an_identity_under_its_own_path(tmp_path):
    gone = str(tmp_path / "gone.safetensors")
    ident = FileIdentity.of(gone)
    assert ident == FileIdentity(gone, -1, -1, -1)
    assert ident != FileIdentity.of(str(tmp_path / "other.safetensors"))


def test_a_default_result_cache_keeps_512_results():
    cache = ResultCache()
    ident = FileIdentity("f", 1, 1, 1)
    for i in range(513):
        cache.put((ident, str(i)), i)
    assert len(cache) == 512 and cache.get((ident, "0")) is None and cache.get((ident, "1")) == 1


@pytest.mark.parametrize("stored", [{"/m/a": "*norm*"}, 7, ["/m/a"]])
def test_keep_globs_ignore_a_stored_value_that_is_not_json_text(stored):
    """A settings backend may hand back a non-string (an old version, a hand-edited file)."""
    store = MemorySettings()
    store.setValue(KeepGlobs.KEY, stored)
    keep = KeepGlobs(store)
    assert keep.get("/m/a") == ""
    keep.set("/m/b", "lm_head*")
    assert json.loads(store.value(KeepGlobs.KEY)) == {"/m/b": "lm_head*"}
