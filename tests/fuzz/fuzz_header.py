"""Coverage-guided fuzzing of the header reader with atheris (``make fuzz``; not part of CI).

Each input is tried two ways: as a whole file, and as header JSON behind a correct length field
(so the fuzzer spends its time inside the JSON rules, not on the 8-byte prefix). Two properties:

- nothing but ``CheckpointError`` escapes ``read_header`` / ``open_checkpoint``;
- we accept exactly when ``safetensors.safe_open`` accepts (set FUZZ_NO_DIFF=1 to skip that).

Seeds come from the malformed corpus (tests/malformed/make_corpus.py) unless corpus folders are
given on the command line; JSON tokens come from ``header.dict`` next to this file unless a
``-dict=`` is given. Usage::

    python tests/fuzz/fuzz_header.py -max_total_time=300 [CORPUS_DIR ...]
"""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import sys
import tempfile
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

with atheris.instrument_imports(include=["inspector"]):
    from inspector.core.errors import CheckpointError
    from inspector.core.formats.safetensors import read_header
    from inspector.core.opening import open_checkpoint

from safetensors import safe_open  # noqa: E402 - after the instrumented imports

DIFFERENTIAL = not os.environ.get("FUZZ_NO_DIFF")
BASE = Path("/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir())
BASE = BASE / "checkpoint-inspector-fuzz"
WORK = BASE / str(os.getpid())
TARGET = WORK / "input.safetensors"


def _clean_stale() -> None:
    """libFuzzer exits without running Python's atexit: drop scratch folders of runs that are
    gone, keeping any that saved a divergence."""
    for d in BASE.glob("*"):
        try:
            os.kill(int(d.name), 0)
            continue  # still running
        except (ValueError, ProcessLookupError):
            pass
        except PermissionError:
            continue
        if not any(d.glob("divergence-*")):
            shutil.rmtree(d, ignore_errors=True)


def _reference_accepts(path: Path) -> bool:
    try:
        with safe_open(str(path), "numpy") as f:
            for k in f.keys():  # noqa: SIM118 - safe_open is not iterable
                f.get_slice(k).get_shape()
            f.metadata()
        return True
    except Exception:
        return False


def _check(blob: bytes) -> None:
    TARGET.write_bytes(blob)
    try:
        read_header(TARGET)
        ours = True
    except CheckpointError as e:
        if "\n" in str(e):
            raise AssertionError(f"multi-line reason: {e!r}") from None
        ours = False
    with contextlib.suppress(CheckpointError):
        open_checkpoint(TARGET).close()
    if DIFFERENTIAL:
        ref = _reference_accepts(TARGET)
        if ref != ours:
            keep = WORK / f"divergence-{len(blob)}-{hash(blob) & 0xFFFFFF:06x}.safetensors"
            keep.write_bytes(blob)
            raise AssertionError(f"safe_open accepts={ref}, we accept={ours}; saved {keep}")


def TestOneInput(data: bytes) -> None:  # atheris' name
    _check(data)
    if len(data) >= 2:
        # header JSON behind a correct length; the first byte picks how much data follows
        n_data = data[0] % 33
        header = data[1:]
        _check(struct.pack("<Q", len(header)) + header + b"\0" * n_data)


def _seed_dir() -> str:
    sys.path.insert(0, str(ROOT / "tests" / "malformed"))
    from make_corpus import CASES

    seeds = WORK / "seeds"
    built = WORK / "built"
    seeds.mkdir()
    for case in CASES:
        try:
            path = case.make(built / case.name)
        except Exception:  # a case needing torch etc. that is not installed
            continue
        if path.is_file():
            (seeds / case.name).write_bytes(path.read_bytes()[:4096])
            raw = path.read_bytes()
            if len(raw) >= 8:
                n = struct.unpack("<Q", raw[:8])[0]
                if 8 + n <= len(raw):  # the header-only form, as TestOneInput's second try
                    (seeds / f"{case.name}.json").write_bytes(b"\x00" + raw[8 : 8 + n])
    return str(seeds)


def main() -> None:
    _clean_stale()
    WORK.mkdir(parents=True, exist_ok=True)
    argv = list(sys.argv)
    if not any(a.startswith("-dict=") for a in argv[1:]):
        argv.insert(1, f"-dict={Path(__file__).with_name('header.dict')}")
    if not any(not a.startswith("-") for a in argv[1:]):
        argv.append(_seed_dir())
    atheris.Setup(argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
