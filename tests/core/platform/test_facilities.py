"""CHECKPOINT_INSPECTOR_WITHOUT is read at every call, and a name it does not know is refused."""

from __future__ import annotations

import pytest

from inspector.core.errors import CheckpointError
from inspector.core.platform import cpu, signals
from inspector.core.platform.facilities import (
    FACILITIES,
    WITHOUT_ENV,
    allowed,
    check_switches,
    switched_off,
)


def test_switched_off_at_call_time(monkeypatch):
    monkeypatch.delenv(WITHOUT_ENV, raising=False)
    assert allowed("link") and switched_off() == frozenset()
    monkeypatch.setenv(WITHOUT_ENV, " link , SIGHUP,")
    assert switched_off() == {"link", "sighup"}
    assert not allowed("link") and allowed("flock")


def test_all_switches_every_facility_off(monkeypatch):
    monkeypatch.setenv(WITHOUT_ENV, "all")
    assert switched_off() == set(FACILITIES)


def test_an_unknown_facility_is_refused_with_the_known_ones(monkeypatch):
    monkeypatch.setenv(WITHOUT_ENV, "pwrite,flok")
    assert not allowed("pwrite") and allowed("flock")  # deep inside a command: never raises
    with pytest.raises(
        CheckpointError, match=r"names flok, which is not a facility \(known: pwrite"
    ):
        check_switches()


def test_the_cli_refuses_an_unknown_facility_in_one_line(tmp_path):
    """One line, exit 2 (it was a traceback from the first call that asked: the exit's reset
    of the signal handlers)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, **{WITHOUT_ENV: "bogus"})
    p = subprocess.run(
        [sys.executable, "-m", "inspector", "list", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.startswith(f"checkpoint-inspector: error: {WITHOUT_ENV} names bogus,")
    assert len(p.stderr.splitlines()) == 1


def test_without_affinity_every_core_counts(monkeypatch):
    import os

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    monkeypatch.delenv(WITHOUT_ENV, raising=False)
    assert cpu.usable_cores() == 1
    monkeypatch.setenv(WITHOUT_ENV, "affinity")
    assert cpu.usable_cores() == 3
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # "undeterminable", says Python
    assert cpu.usable_cores() == 1


def test_without_sighup_only_sigterm_ends_a_command(monkeypatch):
    import signal

    monkeypatch.delenv(WITHOUT_ENV, raising=False)
    assert signals.termination_signals() == (signal.SIGTERM, signal.SIGHUP)
    monkeypatch.setenv(WITHOUT_ENV, "sighup")
    assert signals.termination_signals() == (signal.SIGTERM,)
    assert signals.interrupting_signals() == (signal.SIGINT, signal.SIGTERM)
