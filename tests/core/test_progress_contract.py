"""Every long job reports progress a progress bar can trust: it starts at 0, never goes back,
never passes the total, ends exactly at the total, and the total is the bytes the job reads.
(Mutation testing found these numbers unchecked: a job reporting ``done = 1`` or ``total = None``
passed every test.)"""

from __future__ import annotations

import numpy as np
import pytest
from safetensors.numpy import save_file

from inspector.core.cast.job import cast_checkpoint
from inspector.core.diff import diff_checkpoints
from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import Progress
from inspector.core.stats import compute_stats, stats_and_histogram


def _drive(job) -> tuple[list[Progress], object]:
    seen = []
    try:
        while True:
            seen.append(next(job))
    except StopIteration as stop:
        return seen, stop.value


def _check(seen: list[Progress], total: int, names: set[str]) -> None:
    assert seen, "no progress at all"
    assert all(p.total == total for p in seen)
    assert seen[0].done == 0
    assert seen[-1].done == total and seen[-1].fraction == 1.0
    dones = [p.done for p in seen]
    assert dones == sorted(dones) and all(0 <= d <= total for d in dones)
    assert {p.name for p in seen if p.name} <= names


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(3)
    a = {
        "big": rng.standard_normal(300_000).astype(np.float32),  # several chunks of 64 KiB
        "small": rng.standard_normal(10).astype(np.float32),
        "ids": np.arange(7, dtype=np.int64),
        "only_a": np.ones(5, np.float32),
    }
    b = {k: v for k, v in a.items() if k != "only_a"}
    b["only_b"] = np.zeros(3, np.float32)
    save_file(a, str(tmp_path / "a.safetensors"))
    save_file(b, str(tmp_path / "b.safetensors"))
    return tmp_path / "a.safetensors", tmp_path / "b.safetensors", a


def test_diff_progress(files, monkeypatch):
    import inspector.core.diff as diff

    monkeypatch.setattr(diff, "_CHUNK_ELEMS", 1 << 14)  # many steps
    pa, pb, arrays = files
    with open_checkpoint(pa) as a, open_checkpoint(pb) as b:
        seen, result = _drive(diff_checkpoints(a, b))
    shared = sum(v.nbytes for k, v in arrays.items() if k != "only_a")
    _check(seen, shared, {"big", "small", "ids"})
    assert all(p.name for p in seen[1:-1])  # every step names the tensor it is in
    assert len(seen) > 5 and len(result) == 5


def test_stats_progress(files):
    pa, _, arrays = files
    with open_checkpoint(pa) as ckpt:
        seen, stats = _drive(compute_stats(ckpt))
        _check(seen, sum(v.nbytes for v in arrays.values()), set(arrays))
        assert set(stats) == set(arrays)
        seen, (s, edges, counts) = _drive(stats_and_histogram(ckpt, ckpt["big"]))
    _check(seen, 2 * arrays["big"].nbytes, {"big"})
    assert all(p.name == "big" for p in seen)  # the label the window shows
    assert int(counts.sum()) == arrays["big"].size and s.max == float(arrays["big"].max())


def test_cast_progress(files, tmp_path):
    pa, _, arrays = files
    with open_checkpoint(pa) as ckpt:
        seen, report = _drive(
            cast_checkpoint(
                ckpt, DTYPES["F16"], str(tmp_path / "o.safetensors"), chunk_bytes=1 << 16
            )
        )
    _check(seen, sum(v.nbytes for v in arrays.values()), set(arrays))
    assert {r.name for r in report.tensors} == {"big", "small", "only_a"}


def test_a_mapped_step_maps_progress_returns_the_result_and_is_closed_with_its_caller() -> None:
    from inspector.core.progress import Progress, mapped

    closed = []

    def inner():
        try:
            yield Progress(1, 4, "a")
            yield Progress(2, 4, "b")
            return "done"
        finally:
            closed.append(True)

    def outer():
        result = yield from mapped(inner(), lambda p: Progress(10 + p.done, 14, p.name))
        return result

    job = outer()
    assert [next(job), next(job)] == [Progress(11, 14, "a"), Progress(12, 14, "b")]
    with pytest.raises(StopIteration) as stop:
        next(job)
    assert stop.value.value == "done" and closed == [True]
    job = outer()
    next(job)
    job.close()  # a cancel: the inner step's finally runs now, not when it is collected
    assert closed == [True, True]
