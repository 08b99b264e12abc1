"""The cast report measured on a second thread: the same numbers as measuring inline, errors
surface in the cast, and a cancelled cast leaves no thread behind."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from safetensors.numpy import save_file

from inspector.core.cast import cast_array
from inspector.core.checkpoint import open_checkpoint
from inspector.core.convert import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.precision import ErrorAccumulator
from inspector.core.report_worker import ReportWorker


def test_same_numbers_as_inline():
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(300_000) * 1e3).astype(np.float32)
    x[::997] = 1e-9
    f32, f16 = DTYPES["F32"], DTYPES["F16"]
    inline, threaded = ErrorAccumulator(f32, f16), ErrorAccumulator(f32, f16)
    worker = ReportWorker()
    buf = np.empty(10_000, np.float32)  # reused, like the reader's buffer
    try:
        for i in range(0, x.size, buf.size):
            part = x[i : i + buf.size]
            buf[: part.size] = part
            chunk = buf[: part.size]
            cast = cast_array(chunk, f32, f16)
            inline.update(chunk, cast)
            worker.submit(threaded, chunk, cast)
        worker.drain()
    finally:
        worker.close()
    assert threaded.result() == inline.result()


def test_an_error_in_the_measurement_surfaces():
    class Broken(ErrorAccumulator):
        def update(self, orig, cast):
            raise ValueError("boom")

    worker = ReportWorker()
    try:
        worker.submit(
            Broken(DTYPES["F32"], DTYPES["F16"]), np.zeros(3, np.float32), np.zeros(3, np.float16)
        )
        with pytest.raises(ValueError, match="boom"):
            worker.drain()
    finally:
        worker.close()


def test_a_cancelled_cast_leaves_no_report_thread(tmp_path):
    save_file(
        {f"t{i}": np.ones(200_000, np.float32) for i in range(4)}, str(tmp_path / "a.safetensors")
    )
    with open_checkpoint(tmp_path / "a.safetensors") as ckpt:
        job = cast_checkpoint(
            ckpt, DTYPES["F16"], str(tmp_path / "o.safetensors"), chunk_bytes=1 << 16
        )
        for _ in range(10):
            next(job)
        job.close()  # what Cancel does
    assert not any(t.name.startswith("cast-report") for t in threading.enumerate())
    assert not (tmp_path / "o.safetensors").exists()
