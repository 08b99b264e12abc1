"""Coverage-guided fuzzing of the Burnpack reader with atheris (``make fuzz``; not part of CI).

Each input is tried two ways: as a whole file, and as CBOR metadata behind a correct 10-byte
header and zero padding (so the fuzzer spends its time inside the metadata rules). Properties:

- nothing but ``CheckpointError`` escapes ``read_burnpack`` / ``open_checkpoint``, every reason
  is one line;
- a file we accept is written back by a cast to ``.bpk`` and read again to the same tensors
  (names, dtypes, shapes, param ids), without an error.

Seeds are the malformed Burnpack corpus (tests/malformed/burnpack_corpus.py), burn's own file
(tests/data/burn/mnist.bpk) and burn-quantized tensors (qfloat.bpk: a cast dequantizes them, or
refuses a scheme burn does not dequantize with one line). Usage::

    python tests/fuzz/fuzz_burnpack.py -max_total_time=300 [CORPUS_DIR ...]
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
import tempfile
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

with atheris.instrument_imports(include=["inspector"]):
    from inspector.core.cast.job import cast_checkpoint
    from inspector.core.dtypes import DTYPES
    from inspector.core.errors import CheckpointError
    from inspector.core.formats.burnpack import burnpack_facts, read_burnpack
    from inspector.core.formats.burnpack.tensor import BurnQuantInfo
    from inspector.core.opening import open_checkpoint
    from inspector.core.progress import run_job

BASE = Path("/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir())
WORK = BASE / "checkpoint-inspector-fuzz-bpk" / str(os.getpid())
TARGET = WORK / "input.bpk"
AGAIN = WORK / "again.bpk"


def _shape_of(path: Path) -> list[tuple]:
    """Each tensor as a cast to F32 writes it: a burn-quantized one as its F32 values."""
    header = read_burnpack(path)
    ids = burnpack_facts(header).param_ids
    return [
        (t.name, "F32", t.logical, ids.get(t.name))
        if isinstance(t, BurnQuantInfo)
        else (t.name, t.dtype_name, t.shape, ids.get(t.name))
        for t in header.tensors
    ]


def _check(blob: bytes) -> None:
    TARGET.write_bytes(blob)
    try:
        before = _shape_of(TARGET)
    except CheckpointError as e:
        if "\n" in str(e):
            raise AssertionError(f"multi-line reason: {e!r}") from None
        return
    with open_checkpoint(TARGET) as ckpt:
        quantized = any(isinstance(t, BurnQuantInfo) for t in ckpt.tensors)
        try:
            run_job(cast_checkpoint(ckpt, DTYPES["F32"], str(AGAIN), keep=["*"], report=False))
        except CheckpointError as e:  # a QFloat scheme burn does not dequantize: refused
            if not quantized or "\n" in str(e):
                raise
            return
    again = _shape_of(AGAIN)
    if quantized:  # a QFloat tensor of no values keeps its scales' bytes; as F32 it has none,
        again, before = sorted(again), sorted(before)  # and empty tensors tie in data order
    if again != before:
        raise AssertionError("written back, the file reads otherwise")
    with contextlib.suppress(OSError):
        AGAIN.unlink()


def TestOneInput(data: bytes) -> None:  # atheris' name
    _check(data)
    if data:
        body = data
        head = b"NRUB" + struct.pack("<HI", 1, len(body)) + body
        _check(head + bytes(-len(head) % 256) + b"\0" * (data[0] % 65))


def _seed_dir() -> str:
    sys.path.insert(0, str(ROOT))
    from tests.malformed.burnpack_corpus import CASES

    seeds = WORK / "seeds"
    seeds.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        raw = case.build()
        if len(raw) < 1 << 20:
            (seeds / case.name).write_bytes(raw)
    for name in ("mnist", "qfloat"):  # burn's own file, and burn-quantized tensors
        burn = (ROOT / "tests" / "data" / "burn" / f"{name}.bpk").read_bytes()
        n = struct.unpack("<I", burn[6:10])[0]
        (seeds / f"burn-{name}-metadata").write_bytes(burn[10 : 10 + n])
        (seeds / f"burn-{name}").write_bytes(burn)
    return str(seeds)


def main() -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    argv = list(sys.argv)
    if not any(not a.startswith("-") for a in argv[1:]):
        argv.append(_seed_dir())
    atheris.Setup(argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
