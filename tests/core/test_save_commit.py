"""Reliability round 2, data loss: outputs checked before work, shard sets all old or all new,
modes kept. Each test names the numbered finding of the reliability issue it guards."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.save.writer import save_arrays

F32, F16, BF16 = DTYPES["F32"], DTYPES["F16"], DTYPES["BF16"]


def digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): digest(p) for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def src(tmp_path) -> Path:
    p = tmp_path / "m.safetensors"
    save_arrays(p, [("w", F32, np.linspace(-2, 2, 1000, dtype=np.float32))])
    return p


def make_sharded(folder: Path, n: int = 3, name: str = "model") -> Path:
    """A sharded checkpoint as transformers names it: model-0000i-of-0000n + index."""
    folder.mkdir(parents=True, exist_ok=True)
    weight_map = {}
    for i in range(1, n + 1):
        shard = f"{name}-{i:05d}-of-{n:05d}.safetensors"
        save_arrays(folder / shard, [(f"layer{i}.w", F32, np.full(64, i, dtype=np.float32))])
        weight_map[f"layer{i}.w"] = shard
    index = folder / f"{name}.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {"total_size": 256 * n}, "weight_map": weight_map}))
    return index


def cast(path, out, target=F16, **kw):
    with open_checkpoint(path) as ckpt:
        return run_job(cast_checkpoint(ckpt, target, str(out), **kw))


# -- 1. the report path -------------------------------------------------------------------------


def test_report_naming_the_source_is_refused_before_any_work(src, tmp_path):
    before = digest(src)
    out = tmp_path / "o.safetensors"
    with pytest.raises(CheckpointError, match="input file of this save"):
        cast(src, out, report_path=str(src))
    assert digest(src) == before and not out.exists()


def test_report_naming_the_output_is_refused(src, tmp_path):
    out = tmp_path / "o.safetensors"
    with pytest.raises(CheckpointError, match="both the output and the report"):
        cast(src, out, report_path=str(out))
    assert not out.exists()


def test_report_in_a_missing_folder_is_refused_before_the_output_is_written(src, tmp_path):
    out = tmp_path / "o.safetensors"
    with pytest.raises(CheckpointError, match="does not exist"):
        cast(src, out, report_path=str(tmp_path / "missing" / "r.json"))
    assert not out.exists()


def test_report_naming_an_input_shard_or_the_index_is_refused(tmp_path):
    index = make_sharded(tmp_path / "in")
    before = tree(tmp_path / "in")
    for victim in (index, tmp_path / "in" / "model-00002-of-00003.safetensors"):
        with pytest.raises(CheckpointError, match="input file"):
            cast(index, tmp_path / "out", report_path=str(victim))
    assert tree(tmp_path / "in") == before and not (tmp_path / "out").exists()


def test_report_is_written_with_the_output_and_has_totals(src, tmp_path):
    report = tmp_path / "r.json"
    cast(src, tmp_path / "o.safetensors", report_path=str(report))
    doc = json.loads(report.read_text())
    assert doc["target"] == "F16" and doc["totals"]["tensors_cast"] == 1
    assert [t["name"] for t in doc["tensors"]] == ["w"]
    lines = report.read_text().splitlines()
    assert len(lines) == 3 and lines[1].startswith('  {"name":"w"')  # one tensor per line
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]


# -- 2. non-regular targets -------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_or_device_as_output_or_report_is_refused(src, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(CheckpointError, match="named pipe"):
        cast(src, fifo)
    with pytest.raises(CheckpointError, match="named pipe"):
        cast(src, tmp_path / "o.safetensors", report_path=str(fifo))
    with pytest.raises(CheckpointError, match="is a device"):
        cast(src, "/dev/null")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not (tmp_path / "o.safetensors").exists()


# -- 3. a sharded output is all old or all new ----------------------------------------------------


def cast_with_a_failing_rename(monkeypatch, index, out, fail_at: int) -> list[str]:
    """Cast to F16 with the ``fail_at``-th ``os.replace`` failing (disk full); the targets of
    every rename tried, the undoing ones included."""
    real_replace = os.replace
    calls: list[str] = []

    def replace(a, b):
        calls.append(b)
        if len(calls) == fail_at:
            raise OSError(28, "No space left on device")
        return real_replace(a, b)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(CheckpointError, match="no space left"):
        cast(index, out, target=F16)
    monkeypatch.setattr(os, "replace", real_replace)
    return calls


def test_a_rename_failing_mid_commit_leaves_the_complete_old_set(tmp_path, monkeypatch):
    index = make_sharded(tmp_path / "in")
    out = tmp_path / "out"
    cast(index, out, target=BF16)  # the old set: BF16 shards
    old = tree(out)
    calls = cast_with_a_failing_rename(monkeypatch, index, out, fail_at=3)  # 2 shards renamed
    assert len(calls) == 5  # the third rename failed; the two done were put back
    assert tree(out) == old  # every shard and the index are the old ones again
    with open_checkpoint(out) as ckpt:
        assert {t.dtype.name for t in ckpt.tensors} == {"BF16"}


def test_rollback_restores_a_replaced_file_that_follows_a_new_one(tmp_path, monkeypatch):
    """Backups are made for every file that exists, not only up to the first that does not."""
    index = make_sharded(tmp_path / "in")
    out = tmp_path / "out"
    cast(index, out, target=BF16)
    first = sorted(n for n in os.listdir(out) if n.endswith(".safetensors"))[0]
    (out / first).unlink()  # the old set lacks the first shard: its rename makes a new file
    old = tree(out)
    cast_with_a_failing_rename(monkeypatch, index, out, fail_at=3)
    assert tree(out) == old  # the second shard is the old one again; the first is gone again


def test_overwriting_works_where_hard_links_do_not(tmp_path, monkeypatch):
    """FAT/exFAT drives have no hard links: no backups then, but the save still replaces."""
    index = make_sharded(tmp_path / "in")
    out = tmp_path / "out"
    cast(index, out, target=BF16)

    def no_links(src, dst, *args, **kwargs):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    cast(index, out, target=F16)
    monkeypatch.undo()
    with open_checkpoint(out) as ckpt:
        assert {t.dtype.name for t in ckpt.tensors} == {"F16"}
    assert not any(n.endswith(".partial") for n in os.listdir(out))


@pytest.mark.needs("flock")
def test_sigkill_between_renames_is_rolled_forward_on_the_next_open(tmp_path):
    index = make_sharded(tmp_path / "in", n=4)
    out = tmp_path / "out"
    cast(index, out, target=BF16)
    # a process that dies (like SIGKILL: no cleanup) right after its second rename
    code = textwrap.dedent(
        f"""
        import os
        from inspector.core.opening import open_checkpoint
        from inspector.core.cast.job import cast_checkpoint
        from inspector.core.dtypes import DTYPES
        from inspector.core.progress import run_job
        real, n = os.replace, [0]
        def replace(a, b):
            real(a, b)
            n[0] += 1
            if n[0] == 2:
                os._exit(9)
        os.replace = replace
        run_job(cast_checkpoint(open_checkpoint({str(index)!r}), DTYPES["F16"], {str(out)!r}))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=os.getcwd())
    )
    assert proc.returncode == 9
    dtypes = {
        p.name: json.loads(p.read_bytes()[8:200].split(b"}}")[0] + b"}}")
        for p in out.glob("*.safetensors")
    }
    assert len(dtypes) == 4  # mixed on disk right now: 2 new F16 shards, 2 old BF16
    before = tree(out)
    with open_checkpoint(out) as ckpt:  # a read only says so: the journal may be planted
        assert {t.dtype.name for t in ckpt.tensors} == {"F16", "BF16"}
        assert "interrupted save left" in ckpt.notices[0]
    assert tree(out) == before
    cast(index, out, target=F16)  # the next save into the folder finishes it, then saves
    with open_checkpoint(out) as ckpt:
        assert {t.dtype.name for t in ckpt.tensors} == {"F16"} and not ckpt.notices
    assert not [n for n in os.listdir(out) if n.startswith(".")]  # journal and temps gone


@pytest.mark.needs("flock")
def test_save_that_died_before_committing_leaves_the_old_set(tmp_path):
    index = make_sharded(tmp_path / "in")
    out = tmp_path / "out"
    cast(index, out, target=BF16)
    old = tree(out)
    code = textwrap.dedent(
        f"""
        import os
        from inspector.core.opening import open_checkpoint
        from inspector.core.cast.job import cast_checkpoint
        from inspector.core.dtypes import DTYPES
        job = cast_checkpoint(open_checkpoint({str(index)!r}), DTYPES["F16"], {str(out)!r})
        for i, _ in enumerate(job):
            if i == 5:
                os._exit(9)
        """
    )
    subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=os.getcwd()))
    assert any(n.endswith(".partial") for n in os.listdir(out))
    with open_checkpoint(out) as ckpt:
        assert {t.dtype.name for t in ckpt.tensors} == {"BF16"}
    cast(index, tmp_path / "other", target=F32)  # an unrelated save does not touch it
    cast(index, out, target=BF16)  # the next save into it cleans the dead one's temps
    assert tree(out) == old
    assert not [n for n in os.listdir(out) if n.startswith(".")]


def test_nested_shard_paths_are_cast_into_matching_subfolders(tmp_path):
    """Reliability 20: an index naming a/b/s.safetensors opened but could not be cast."""
    folder = tmp_path / "in"
    (folder / "a" / "b").mkdir(parents=True)
    save_arrays(folder / "a" / "b" / "s.safetensors", [("x", F32, np.ones(4, np.float32))])
    save_arrays(folder / "t.safetensors", [("y", F32, np.ones(4, np.float32))])
    index = folder / "model.safetensors.index.json"
    index.write_text(json.dumps({"weight_map": {"x": "a/b/s.safetensors", "y": "t.safetensors"}}))
    out = tmp_path / "out"
    cast(index, out)
    with open_checkpoint(out) as ckpt:
        assert {t.name: t.dtype.name for t in ckpt.tensors} == {"x": "F16", "y": "F16"}
    assert (out / "a" / "b" / "s.safetensors").is_file()


# -- 5. permissions -----------------------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
@pytest.mark.needs("fchmod")
def test_output_keeps_the_source_mode_or_the_replaced_files_mode(src, tmp_path):
    src.chmod(0o600)
    out = tmp_path / "o.safetensors"
    cast(src, out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600  # never wider than the source
    existing = tmp_path / "e.safetensors"
    existing.write_bytes(b"old")
    existing.chmod(0o640)
    src.chmod(0o644)
    cast(src, existing)
    assert stat.S_IMODE(existing.stat().st_mode) == 0o640  # the replaced file's mode
    sharded_in = make_sharded(tmp_path / "in")
    for p in (tmp_path / "in").iterdir():
        p.chmod(0o600)
    cast(sharded_in, tmp_path / "out")
    assert {stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "out").iterdir()} == {0o600}


def test_opening_finishes_commits_but_never_deletes_a_save_s_temps(tmp_path):
    """Opening only rolls a journal forward: a temp with no journal may belong to a save in
    another process that has not taken its lock yet, so only a save into the folder cleans."""
    index = make_sharded(tmp_path / "in", n=2)
    stray = index.parent / ".model-00001-of-00002.safetensors.0123456789ab.partial"
    stray.write_bytes(b"a save's temp")
    with open_checkpoint(index) as ckpt:
        assert len(ckpt.tensors) > 0
        assert ckpt.metadata == json.loads(index.read_text())["metadata"]
    assert stray.read_bytes() == b"a save's temp"
