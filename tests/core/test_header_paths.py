"""The two parsing paths (msgspec fast path, careful stdlib path) give equal headers: on every
valid file of the corpus the fast path accepts, and on ordinary files, which it must accept."""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.formats.safetensors import parse_header_text, read_header
from inspector.core.formats.safetensors.fast import parse_fast
from inspector.core.layout import Header
from inspector.core.save.writer import save_arrays
from tests.malformed.make_corpus import CASES

VALID = [c for c in CASES if c.expect == "ok"]


def both_paths(path) -> tuple[Header | None, Header]:
    blob = path.read_bytes()
    (n,) = struct.unpack("<Q", blob[:8])
    raw = blob[8 : 8 + n]
    fast = parse_fast(str(path), raw, data_start=8 + n, file_size=len(blob))
    careful = parse_header_text(
        str(path), raw.decode("utf-8"), data_start=8 + n, file_size=len(blob)
    )
    return fast, careful


def same(a: Header, b: Header) -> None:
    assert [
        (t.name, t.dtype_name, tuple(t.shape), tuple(t.data_offsets), t.file) for t in a.tensors
    ] == [(t.name, t.dtype_name, tuple(t.shape), tuple(t.data_offsets), t.file) for t in b.tensors]
    assert a.metadata == b.metadata
    assert (a.data_start, a.file_size) == (b.data_start, b.file_size)


@pytest.mark.parametrize("case", VALID, ids=[c.name for c in VALID])
def test_paths_agree_on_valid_corpus_files(tmp_path, case):
    path = case.make(tmp_path / case.name)
    if path.is_dir():
        pytest.skip("a folder case")
    fast, careful = both_paths(path)
    if fast is not None:  # the fast path may decline an odd file; it must never differ
        same(fast, careful)
    same(read_header(path), careful)


def test_fast_path_takes_ordinary_files_and_agrees(tmp_path):
    path = tmp_path / "m.safetensors"
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    save_arrays(
        path,
        [
            ("a.weight", DTYPES["F32"], x),
            ("a.bias", DTYPES["F16"], np.zeros(4, np.float16)),
            ("empty", DTYPES["F64"], np.zeros((0, 3))),
            ("ids", DTYPES["I64"], np.arange(5)),
        ],
        {"format": "pt"},
    )
    fast, careful = both_paths(path)
    assert fast is not None
    same(fast, careful)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_refused_at_once_not_waited_on(tmp_path):
    """Opening a FIFO for reading blocks until a writer comes: a mistyped path must not hang."""
    import threading

    from inspector.core.errors import CheckpointError

    fifo = tmp_path / "x.safetensors"
    os.mkfifo(fifo)
    outcome: list[str] = []

    def read() -> None:
        try:
            read_header(str(fifo))
        except CheckpointError as e:
            outcome.append(e.reason)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():  # unblock the reader so the test process can end
        with open(fifo, "wb"):
            pass
    assert outcome == ["is a named pipe (FIFO), not a .safetensors file"]
