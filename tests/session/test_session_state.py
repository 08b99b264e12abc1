"""The session's state and rules, checked where mutation testing runs (no Qt): a fresh session,
the target rule across checkpoints, what opening closes and announces, the caches' bounds and
the recent-files store. Each test here killed mutants of inspector/session/ that lived."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.model_folder.config import read_model_config
from inspector.core.opening import open_checkpoint
from inspector.core.save.writer import save_arrays
from inspector.core.target_rule import TargetSource
from inspector.session import MemorySettings, RecentFiles, Session
from inspector.session.file_identity import FileIdentity, ResultCache
from inspector.session.session import LazyCheckpoint

F32, F16, BF16 = DTYPES["F32"], DTYPES["F16"], DTYPES["BF16"]


@pytest.fixture
def files(tmp_path):
    folder = tmp_path / "bf16"
    folder.mkdir()
    cfg_file = folder / "model.safetensors"
    save_arrays(cfg_file, [("w", F32, np.ones(4, np.float32))])
    (folder / "config.json").write_text(json.dumps({"torch_dtype": "bfloat16"}))
    plain = tmp_path / "plain.safetensors"
    save_arrays(plain, [("v", F32, np.zeros(2, np.float32))])
    return cfg_file, read_model_config(str(cfg_file)), plain


def test_a_fresh_session_holds_nothing_and_its_default_target():
    s = Session(F16)
    assert (s.target, s.default_target, s.chosen_target) == (F16, F16, None)
    assert s.target_source is TargetSource.DEFAULT
    assert s.checkpoint is None and s.path is None and s.current is None
    assert s.reference is None and s.diffs is None and s.diff_summary is None
    assert s.diff_by_name == {} and s.identities == {} and s.cast is None
    assert s.model_config is None and s.lint is None and s.summary is None
    assert s.groups.groups == {} and s.groups.dtype_names == []
    assert s.stats_cache.limit == 512 and s.before_after_cache.limit == 256
    chosen = Session(F16, chosen=True)
    assert chosen.chosen_target is F16 and chosen.target_source is TargetSource.CHOSEN


def test_the_target_follows_the_rule_across_checkpoints(files):
    cfg_file, config, plain = files
    s = Session(F32)
    s.open(open_checkpoint(cfg_file), model_config=config)
    assert (s.target, s.target_source) == (BF16, TargetSource.CONFIG)
    assert s.model_config is config
    s.open(open_checkpoint(plain))
    assert (s.target, s.target_source) == (F32, TargetSource.DEFAULT)  # not carried over
    assert s.choose_target(F16)  # the person's choice: it wins, and is the new default
    assert (s.target, s.target_source, s.default_target) == (F16, TargetSource.CHOSEN, F16)
    s.open(open_checkpoint(cfg_file), model_config=config)
    assert (s.target, s.target_source) == (F16, TargetSource.CHOSEN)
    assert s.choose_target(None)  # "from config.json": back to the config's dtype
    assert (s.target, s.target_source) == (BF16, TargetSource.CONFIG)
    s.open(open_checkpoint(plain))
    assert (s.target, s.target_source) == (F16, TargetSource.DEFAULT)
    explicit = Session(F16, chosen=True)
    explicit.open(open_checkpoint(cfg_file), model_config=config)
    assert explicit.target is F16  # --target wins over config.json


def test_open_announces_the_new_checkpoint_and_closes_the_old_one(files):
    _, _, plain = files
    s = Session(F32)
    seen = []
    s.events.checkpoint_changed.connect(lambda ckpt, path: seen.append((ckpt, path)))
    first = open_checkpoint(plain)
    s.open(first, path="shown-as")
    first.view("v")  # mapped
    assert seen == [(first, "shown-as")] and s.path == "shown-as"
    s.select(first["v"])
    second = open_checkpoint(plain)
    s.open(second)
    assert seen[-1] == (second, second.path) and s.current is None and s.lint is None
    assert first._maps == {}  # the old one was closed
    s.open(second)  # the same checkpoint again: not closed under the view
    assert second.view("v").tolist() == [0.0, 0.0]


def test_the_caches_drop_their_oldest_past_the_limit(tmp_path):
    cache = ResultCache(2)
    ident = FileIdentity("a", 1, 2, 3)
    cache.put((ident, "x"), 1)
    cache.put((ident, "y"), 2)
    cache.put((ident, "x"), 10)  # refreshed: now the newest
    cache.put((ident, "z"), 3)
    assert len(cache) == 2 and cache.get((ident, "y")) is None
    assert cache.get((ident, "x")) == 10 and cache.get((ident, "z")) == 3
    gone = FileIdentity.of(str(tmp_path / "missing"))
    assert (gone.size, gone.mtime_ns, gone.inode) == (-1, -1, -1)
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    here = FileIdentity.of(str(path))
    assert here.size == 3 and here.inode == path.stat().st_ino
    assert here.mtime_ns == path.stat().st_mtime_ns


def test_a_lazy_checkpoint_opens_once_and_closes(files):
    _, _, plain = files
    lazy = LazyCheckpoint(str(plain))
    lazy.close()  # nothing open yet: nothing to do
    ckpt = lazy.get()
    assert lazy.get() is ckpt
    ckpt.view("v")
    lazy.close()
    assert ckpt._maps == {} and lazy.get() is not ckpt


def test_recent_files_and_the_memory_store():
    store = MemorySettings()
    assert store.value("missing") is None and store.value("missing", 7) == 7
    recent = RecentFiles(store)
    assert recent.paths() == []
    store.setValue("recent", "one")  # QSettings gives a lone string for a one-item list
    assert recent.paths() == ["one"]
    recent.add("two")
    recent.add("one")
    assert recent.paths() == ["one", "two"]
    for i in range(12):
        recent.add(f"p{i}")
    assert len(recent.paths()) == 10 and recent.paths()[0] == "p11"
    recent.clear()
    assert recent.paths() == []


def test_the_reference_is_announced_closed_and_cleared(files):
    _, _, plain = files
    s = Session(F32)
    log = []
    for e in (s.events.reference_changed, s.events.diffs_changed, s.events.cast_changed):
        e.connect(lambda value, n=e.name: log.append((n, value)))
    assert [e.name for e in (s.events.reference_changed, s.events.cast_changed)] == [
        "reference_changed",
        "cast_changed",
    ]
    s.clear_reference()  # nothing chosen: nothing announced
    assert log == []
    shown = open_checkpoint(plain)
    s.open(shown)
    ref = open_checkpoint(plain)
    s.set_reference(ref)
    assert log == [("reference_changed", ref), ("diffs_changed", None)]
    ref.view("v")
    other = open_checkpoint(plain)
    s.set_reference(other)  # the first reference is closed, the shown checkpoint is not
    assert ref._maps == {} and s.reference is other
    s.clear_reference()
    assert s.reference is None and log[-2:] == [
        ("reference_changed", None),
        ("diffs_changed", None),
    ]
    assert shown.view("v").tolist() == [0.0, 0.0]


def test_stats_keys_remember_the_identity_a_file_had_when_opened(files):
    _, _, plain = files
    s = Session(F32)
    s.open(open_checkpoint(plain))
    t = s.checkpoint["v"]
    key = s.stats_key(t)
    assert key == (s.identities[str(plain)], "v") and key[0] == FileIdentity.of(str(plain))
    s.identities.clear()
    assert s.stats_key(t)[0] == FileIdentity.of(str(plain))


def test_keep_globs_are_remembered_per_checkpoint():
    from inspector.session.keep_globs import MAX_REMEMBERED, KeepGlobs

    store = MemorySettings()
    keep = KeepGlobs(store)
    assert keep.get("a") == ""
    keep.set("a", "*norm*")
    keep.set("b", "  ")  # blank: nothing remembered
    assert keep.get("a") == "*norm*" and keep.get("b") == ""
    assert json.loads(store.value("keep_by_checkpoint")) == {"a": "*norm*"}
    store.setValue("keep_by_checkpoint", "{not json")
    assert keep.get("a") == ""
    store.setValue("keep_by_checkpoint", json.dumps([1, 2]))
    assert keep.get("a") == ""
    store.setValue("keep_by_checkpoint", json.dumps({"x": 5}))
    assert keep.get("x") == "5"
    for i in range(MAX_REMEMBERED + 3):
        keep.set(f"p{i}", "*")
    table = json.loads(store.value("keep_by_checkpoint"))
    assert len(table) == MAX_REMEMBERED and "p0" not in table and f"p{MAX_REMEMBERED + 2}" in table


def test_each_event_is_named_as_the_attribute_it_is_reached_by():
    """An event's name (its repr, what a log shows) is the attribute it is reached by.
    (Mutation testing: the preview event named otherwise passed.)"""
    from inspector.session.events import Event, SessionEvents

    events = vars(SessionEvents())
    assert "preview_changed" in events
    assert all(type(e) is Event and e.name == attr for attr, e in events.items())
    assert repr(events["preview_changed"]) == "Event('preview_changed', 0 callbacks)"


def test_a_quantized_weight_and_its_parts_are_quantized_and_the_rest_is_judged_by_dtype(
    tmp_path,
):
    """status_of: the codes and scales of a quantized weight (the layout the window passes in
    its groups) are QUANTIZED whatever their dtype; a tensor outside the layout gets its dtype's
    status. (Mutation testing: a session ignoring the layout, or inverting it, passed.)"""
    from inspector.core.model_folder.lint_quant import quant_layout_of
    from inspector.core.status import TensorStatus
    from inspector.core.summary import DTypeGroups
    from tests.quant_folders import deepseek_folder

    deepseek_folder(tmp_path / "q")
    ckpt = open_checkpoint(str(tmp_path / "q"))
    quant = quant_layout_of(read_model_config(str(tmp_path / "q")), ckpt.tensors)
    s = Session(DTYPES["BF16"])
    s.open(ckpt, groups=DTypeGroups(ckpt.tensors, quant))
    status = {t.name: s.status_of(t) for t in s.checkpoint.tensors}
    w = "model.layers.0.mlp.up_proj.weight"
    assert status == {
        w: TensorStatus.QUANTIZED,
        w + "_scale_inv": TensorStatus.QUANTIZED,
        "model.norm.weight": TensorStatus.MATCH,
        "lm_head.weight": TensorStatus.MATCH,
    }
