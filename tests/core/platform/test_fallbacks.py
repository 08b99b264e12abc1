"""Every platform facility switched off in turn (as on macOS or Windows, or on a file system
without it): a cast writes the same bytes and report, a cast over its own output (backups)
too, and the facility is really not used."""

from __future__ import annotations

import fcntl
import os
import stat

import pytest
import torch
from huggingface_hub import save_torch_state_dict

from inspector.core.cast.job import cast_checkpoint
from inspector.core.cast.worker_policy import PROCESSES_ENV, processes_for
from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.platform import file_io
from inspector.core.platform.facilities import FACILITIES, WITHOUT_ENV
from inspector.core.progress import run_job
from inspector.core.save import writeback

CHUNK = 64 << 10


def _state_dict() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(34)
    w = torch.randn(300_000, generator=g) * 0.05
    w[::997] = torch.tensor([1e-9, 70_000.0, float("inf"), float("nan")]).repeat(301)[:301]
    return {
        "a.weight": w,
        "a.ids": torch.arange(50_000, dtype=torch.int64),
        "b.weight": (torch.randn(70_001, generator=g) * 3).double(),
        "b.half": torch.randn(40_000, generator=g).bfloat16(),
    }


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A sharded safetensors model (cast by worker processes where there is pwrite) and a
    pickle of transposed views (read a strided tensor at a time: madvise)."""
    root = tmp_path_factory.mktemp("inputs")
    sharded = root / "sharded"
    sharded.mkdir()
    save_torch_state_dict(_state_dict(), str(sharded), max_shard_size=600_000)
    g = torch.Generator().manual_seed(35)
    base = torch.randn(300, 400, generator=g, dtype=torch.float64)
    torch.save({"t": base.t(), "s": base[::3, 1::2], "ids": torch.arange(7)}, root / "m.pt")
    return {"sharded": next(sharded.glob("*.index.json")), "pickle": root / "m.pt"}


def _cast(src, out, target="F16") -> str:
    with open_checkpoint(src) as ckpt:
        report = run_job(
            cast_checkpoint(ckpt, DTYPES[target], str(out), chunk_bytes=CHUNK, report_path=None)
        )
    return report.to_json_text()


_OUT = {"sharded": "sharded", "pickle": "m.safetensors"}  # a folder, a file


def _tree(out) -> dict[str, bytes]:
    if out.is_file():
        return {out.name: out.read_bytes()}
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def expected(inputs, tmp_path_factory):
    """What every facility gives: the reference the fallbacks must equal, byte for byte."""
    root = tmp_path_factory.mktemp("expected")
    mp = pytest.MonkeyPatch()
    try:
        mp.delenv(WITHOUT_ENV, raising=False)
        mp.setenv(PROCESSES_ENV, "2")
        reports = {k: _cast(v, root / _OUT[k]) for k, v in inputs.items()}
    finally:
        mp.undo()
    return reports, {k: _tree(root / _OUT[k]) for k in inputs}


@pytest.mark.parametrize("facility", [*FACILITIES, ",".join(FACILITIES)])
def test_a_cast_without_a_facility_writes_the_same_bytes(
    facility, inputs, expected, tmp_path, monkeypatch
):
    monkeypatch.setenv(WITHOUT_ENV, facility)
    monkeypatch.setenv(PROCESSES_ENV, "2")
    reports, trees = expected
    for key, src in inputs.items():
        out = tmp_path / _OUT[key]
        _cast(src, out, target="BF16")  # then cast over it: the commit replaces every file
        assert _cast(src, out) == reports[key]
        assert _tree(out) == trees[key], key
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith((".partial", ".txn"))]


def test_without_pwrite_there_are_no_worker_processes(monkeypatch):
    monkeypatch.delenv(WITHOUT_ENV, raising=False)
    monkeypatch.setenv(PROCESSES_ENV, "2")
    assert processes_for(1 << 40) == 2
    monkeypatch.setenv(WITHOUT_ENV, "pwrite")
    assert processes_for(1 << 40) == 0


def _spy(monkeypatch, owner, name, calls):
    real = getattr(owner, name)

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)


@pytest.mark.parametrize("switched_off", [False, True])
def test_a_switched_off_facility_is_never_called(switched_off, inputs, tmp_path, monkeypatch):
    """The in-process facilities of a threads-only cast over an existing sharded output."""
    monkeypatch.delenv(WITHOUT_ENV, raising=False)
    calls: dict[str, list] = {
        "link": [],
        "flock": [],
        "writeback": [],
        "dir_fsync": [],
        "fchmod": [],
    }
    _spy(monkeypatch, os, "link", calls["link"])
    _spy(monkeypatch, os, "fchmod", calls["fchmod"])
    _spy(monkeypatch, fcntl, "flock", calls["flock"])
    if file_io._SYNC_FILE_RANGE is not None:
        _spy(monkeypatch, file_io, "_SYNC_FILE_RANGE", calls["writeback"])
    real_fsync = os.fsync
    monkeypatch.setattr(
        os,
        "fsync",
        lambda fd: (
            calls["dir_fsync"].append(fd) if stat.S_ISDIR(os.fstat(fd).st_mode) else None,
            real_fsync(fd),
        )[1],
    )
    monkeypatch.setenv(PROCESSES_ENV, "0")
    # write-behind every 64 KiB instead of 32 MiB, so a small cast uses it (a module constant,
    # not the function's defaults: mutmut's trampolines, as any wrapper, have defaults of their own)
    monkeypatch.setattr(writeback, "KICK_BYTES", 64 << 10)
    out = tmp_path / "out"
    _cast(inputs["sharded"], out, target="BF16")
    if switched_off:
        monkeypatch.setenv(WITHOUT_ENV, ",".join(calls))
    for c in calls.values():
        c.clear()
    with open_checkpoint(inputs["sharded"]) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(out), chunk_bytes=CHUNK))
    used = {k for k, v in calls.items() if v}
    if file_io._SYNC_FILE_RANGE is None:
        used.add("writeback")  # not on this system at all
    assert used == (set() if switched_off else set(calls))
