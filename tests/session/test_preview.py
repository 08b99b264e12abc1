"""The quantize preview in the session: taken only for the checkpoint shown, dropped when another
opens, and the scheme shown in the precision tab changed only to one that was measured."""

from __future__ import annotations

from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.quantize.preview import preview_checkpoint
from inspector.core.quantize.schemes import SCHEMES
from inspector.session import Session
from tests.core.quantize.models import llama_folder


def test_a_preview_belongs_to_the_checkpoint_it_measured(tmp_path) -> None:
    a = open_checkpoint(str(llama_folder(tmp_path / "a")))
    b = open_checkpoint(str(llama_folder(tmp_path / "b", seed=1)))
    s = Session(DTYPES["F32"])
    seen: list[object] = []
    s.events.preview_changed.connect(seen.append)
    s.open(a)
    reports = run_job(preview_checkpoint(a, [SCHEMES["W4A16"], SCHEMES["FP8_BLOCK"]]))
    s.open(b)
    assert not s.accept_preview(reports, a, ("lm_head",))  # measured a, b is shown
    assert s.preview is None and seen == []
    s.open(a)
    assert s.accept_preview(reports, a, ("lm_head",))
    assert s.preview is not None and s.preview.shown is None and seen == [s.preview]
    assert s.preview.source is a and s.preview.ignore == ("lm_head",)  # what it measured, kept
    assert not s.show_scheme("NVFP4A16")  # not measured
    assert s.show_scheme("FP8_BLOCK") and s.preview.shown_report is reports[1]
    assert not s.show_scheme("FP8_BLOCK")  # no change, no event
    assert len(seen) == 2 and seen[1] is s.preview  # the preview, now with its scheme shown
    s.open(b)
    assert s.preview is None and seen[-1] is None
