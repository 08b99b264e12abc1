"""How many cast worker processes a cast gets: the work, the cores, and the count a user forces."""

from __future__ import annotations

import pytest

from inspector.core.cast import worker_policy
from inspector.core.cast.worker_policy import (
    MAX_PROCESSES,
    PROCESS_MIN_BYTES,
    PROCESSES_ENV,
    bytes_on_disk,
    processes_for,
    processes_supported,
)
from inspector.core.platform import cpu

pytestmark = pytest.mark.skipif(not processes_supported(), reason="POSIX pwrite")


@pytest.fixture
def program(monkeypatch):
    """A program that allowed workers, on a machine whose core count the test sets."""
    monkeypatch.delenv(PROCESSES_ENV, raising=False)
    worker_policy.allow_worker_processes()
    yield lambda cores: monkeypatch.setattr(cpu, "usable_cores", lambda: cores)
    worker_policy.allow_worker_processes(False)


@pytest.mark.parametrize(
    ("cores", "work", "processes"),
    [
        (8, PROCESS_MIN_BYTES, MAX_PROCESSES),  # one per core, at most MAX_PROCESSES
        (3, PROCESS_MIN_BYTES, 3),
        (8, PROCESS_MIN_BYTES - 1, 0),  # threads finish small work first
        (1, 1 << 40, 0),  # one core: no process
    ],
)
def test_workers_for_the_work_and_the_cores(program, cores, work, processes):
    program(cores)
    assert processes_for(work) == processes


def test_a_forced_count_wins_up_to_64(program, monkeypatch):
    program(1)
    for forced, processes in (("2", 2), ("64", 64), ("100", 64), ("0", 0)):
        monkeypatch.setenv(PROCESSES_ENV, forced)
        assert processes_for(0) == processes


def test_the_size_estimate_of_an_index_in_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "a.safetensors").write_bytes(bytes(700))
    (tmp_path / "model.safetensors.index.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    assert bytes_on_disk("model.safetensors.index.json") == 700
