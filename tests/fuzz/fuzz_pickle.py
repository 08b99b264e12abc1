"""Coverage-guided fuzzing of the pickle reader and ``scan`` with atheris (``make fuzz``; not CI).

Each input is written as a file under three names (a torch zip stays a zip whatever its name; a
raw pickle is judged by its bytes) and read by ``open_checkpoint`` (the ``list`` path) and
``scan_file``. Properties, for every input:

- nothing but ``CheckpointError`` escapes the read, and ``scan_file`` never raises;
- nothing is executed: a canary file that a payload would create never appears;
- a file that ``list`` reads is never scanned REFUSED, and one ``scan`` calls CLEAN is a file the
  reader either reads or refuses by reason (the two agree on imports);
- memory stays bounded: the process runs under a 2 GiB address-space limit.

Seeds: the hostile corpus (tests/hostile/corpus.py) and real ``torch.save`` outputs when torch is
installed, unless corpus folders are given. Usage::

    python tests/fuzz/fuzz_pickle.py -max_total_time=300 [CORPUS_DIR ...]
"""

from __future__ import annotations

import resource
import sys
import tempfile
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

with atheris.instrument_imports(include=["inspector"]):
    from inspector.core.errors import CheckpointError
    from inspector.core.opening import open_checkpoint
    from inspector.core.scan.walk import ScanStatus, scan_file

resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
WORK = Path(tempfile.mkdtemp(prefix="checkpoint-inspector-fuzz-pickle-"))
CANARY = WORK / "CANARY"
NAMES = ("pytorch_model.bin", "weights.pt.1", "model.safetensors")


def test_one(data: bytes) -> None:
    for name in NAMES:
        path = WORK / name
        path.write_bytes(data)
        try:
            with open_checkpoint(path):
                read = True
        except CheckpointError:
            read = False
        verdict = scan_file(str(path)).status
        if read and verdict is ScanStatus.REFUSED:
            raise AssertionError(f"{name}: list reads a file scan refuses")
        if CANARY.exists():
            raise AssertionError(f"{name}: a payload ran")


def _seeds(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    from tests.hostile.corpus import CASES

    for case in CASES:
        sub = WORK / "seeds" / case.name
        sub.mkdir(parents=True, exist_ok=True)
        path = case.build(sub, CANARY)
        if path.is_file():
            (folder / case.name).write_bytes(path.read_bytes())
    try:
        import io

        import torch
    except ImportError:
        return
    for i, obj in enumerate(({"w": torch.ones(3)}, [torch.zeros(2, 2).t(), {"a": 1}])):
        for new in (True, False):
            buf = io.BytesIO()
            torch.save(obj, buf, _use_new_zipfile_serialization=new)
            (folder / f"torch-{i}-{new}").write_bytes(buf.getvalue())


if __name__ == "__main__":
    argv = list(sys.argv)
    if not any(not a.startswith("-") for a in argv[1:]):
        seeds = WORK / "corpus"
        _seeds(seeds)
        argv.append(str(seeds))
    atheris.Setup(argv, test_one)
    atheris.Fuzz()
