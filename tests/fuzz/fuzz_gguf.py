"""Coverage-guided fuzzing of the GGUF header reader with atheris (``make fuzz``; not in CI).

Properties: nothing but ``CheckpointError`` escapes ``read_gguf`` / ``open_checkpoint``, every
reason is one line, and an accepted file's tensors all lie inside it. Seeds: the malformed GGUF
corpus (tests/malformed/gguf_corpus.py) and a small file from the gguf package's writer.

    python tests/fuzz/fuzz_gguf.py -max_total_time=300 [CORPUS_DIR ...]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

with atheris.instrument_imports(include=["inspector"]):
    from inspector.core.errors import CheckpointError
    from inspector.core.formats.gguf import read_gguf

BASE = Path("/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir())
WORK = BASE / "checkpoint-inspector-fuzz-gguf" / str(os.getpid())
TARGET = WORK / "input.gguf"


def TestOneInput(data: bytes) -> None:  # atheris' name
    TARGET.write_bytes(data)
    try:
        header = read_gguf(TARGET)
    except CheckpointError as e:
        if "\n" in str(e):
            raise AssertionError(f"multi-line reason: {e!r}") from None
        return
    for t in header.tensors:
        if header.data_start + t.end > header.file_size:
            raise AssertionError(f"{t.name} ends past the file")


def _seed_dir() -> str:
    import numpy as np

    from tests.gguf_files import Q, write_gguf
    from tests.malformed.gguf_corpus import CASES

    seeds = WORK / "seeds"
    seeds.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        (seeds / case.name).write_bytes(case.build())
    a = np.ones((4, 64), np.float32)
    write_gguf(seeds / "valid.gguf", {"w": (a, Q.Q8_0), "v": (a, None)}, tokens=40)
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
