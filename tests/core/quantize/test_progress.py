"""quantize and its preview report progress a bar can trust: from 0, never back, ending exactly
at the total (NVFP4's first pass included, not a second bar restarting at 0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.opening import open_checkpoint
from inspector.core.quantize.job import quantize_checkpoint
from inspector.core.quantize.preview import preview_checkpoint
from inspector.core.quantize.schemes import SCHEMES

from .models import llama_folder


def _check(job) -> None:
    seen = []
    try:
        while True:
            seen.append(next(job))
    except StopIteration:
        pass
    total = seen[0].total
    assert all(p.total == total for p in seen)
    dones = [p.done for p in seen]
    assert dones[0] == 0 and dones[-1] == total and dones == sorted(dones)
    assert len(seen) > 10


@pytest.mark.parametrize("scheme", ["NVFP4A16", "W4A16"])
def test_quantize_progress(tmp_path: Path, scheme: str) -> None:
    src = llama_folder(tmp_path / "m")
    job = quantize_checkpoint(open_checkpoint(str(src)), SCHEMES[scheme], str(tmp_path / "o"),
                              chunk_bytes=20_000)  # fmt: skip
    _check(job)


def test_preview_progress(tmp_path: Path) -> None:
    src = llama_folder(tmp_path / "m")
    _check(
        preview_checkpoint(open_checkpoint(str(src)), list(SCHEMES.values()), chunk_bytes=20_000)
    )
