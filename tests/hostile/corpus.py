"""The hostile corpus: files and folders built to make a *reader* run code, write, or exhaust
the machine. Each case writes itself into a folder (from bytes: no torch needed) and says whether
``torch.load`` of it would run code (``unsafe``: ``scan`` must never call it clean).

The bar every case is held to (tests/cli/test_hostile_corpus.py): no canary, no byte changed
outside an explicit output, no wrong "clean", no traceback, exit codes 0/1/2 only, bounded memory.
Builders from other test modules register here too, so one runner holds them all.

Run as a script to write the corpus to a folder: ``python -m tests.hostile.corpus /tmp/hostile``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.hostile.bounds import BUILDERS as BOUNDS
from tests.hostile.containers import BUILDERS as CONTAINERS
from tests.hostile_folders import build as build_folder
from tests.hostile_folders import evil_pickle


@dataclass(frozen=True)
class HostileCase:
    name: str
    build: Callable[[Path, Path], Path]  # (folder, canary) -> the path to hand the tool
    unsafe: bool  # torch.load (or a loader picking files by name) would run its payload


def _file(name: str, payload: Callable[[Path], bytes]) -> Callable[[Path, Path], Path]:
    def build(folder: Path, canary: Path) -> Path:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(payload(canary))
        return path

    return build


def _in_folder(name: str) -> Callable[[Path, Path], Path]:
    """A benign safetensors model folder with the evil pickle hidden under ``name``."""

    def build(folder: Path, canary: Path) -> Path:
        import numpy as np

        from tests.hostile_folders import F32, save_arrays

        model = folder / "model"
        model.mkdir(parents=True)
        save_arrays(model / "model.safetensors", [("w", F32, np.ones(4, np.float32))])
        _file(name, evil_pickle)(model, canary)
        return model

    return build


def _bpk(name: str) -> Callable[[Path], bytes]:
    from tests.malformed.burnpack_corpus import BY_NAME

    return lambda _canary: BY_NAME[name].build()


def _gguf(name: str) -> Callable[[Path], bytes]:
    from tests.malformed.gguf_corpus import BY_NAME

    return lambda _canary: BY_NAME[name].build()


def _protocol0(canary: Path) -> bytes:
    return f"cos\nsystem\n(S'touch {canary}'\ntR.".encode()


def _journal_folder(forged: bool) -> Callable[[Path, Path], Path]:
    def build(folder: Path, canary: Path) -> Path:
        model, _ = build_folder(folder, canary, forged=forged)
        return model

    return build


def _index_outside(shard: str) -> Callable[[Path, Path], Path]:
    """A folder whose index sends transformers to an evil pickle beside it, outside the folder."""

    def build(folder: Path, canary: Path) -> Path:
        import json

        _file("outside/evil.bin", evil_pickle)(folder, canary)
        model = _in_folder("ok.txt")(folder, canary)
        (model / "ok.txt").unlink()
        weight_map = {"w": shard.format(outside=folder / "outside")}
        (model / "pytorch_model.bin.index.json").write_text(json.dumps({"weight_map": weight_map}))
        return model

    return build


CASES: list[HostileCase] = [
    HostileCase("journal-downloaded", _journal_folder(False), unsafe=True),
    HostileCase("journal-forged", _journal_folder(True), unsafe=True),
    HostileCase("reduce-system.bin", _file("m.bin", evil_pickle), unsafe=True),
    HostileCase("protocol0.pickle", _file("model.pickle", _protocol0), unsafe=True),
    HostileCase("protocol0-no-suffix", _file("weights.pt.1", _protocol0), unsafe=True),
    *(
        HostileCase(f"folder-hides-{n.replace('/', '_')}", _in_folder(n), unsafe=True)
        for n in (
            "checkpoint.pth.tar",
            "model.pickle",
            "MODEL.PT",
            "weights.pt.1",
            ".hidden.pt",
            "unet/diffusion_pytorch_model.bin",
            "deep/er/than/that/x",
        )
    ),
    HostileCase("index-names-parent", _index_outside("../outside/evil.bin"), unsafe=True),
    HostileCase("index-names-absolute", _index_outside("{outside}/evil.bin"), unsafe=True),
    *(
        HostileCase(f"container-{name}", _file("pytorch_model.bin", build), unsafe=True)
        for name, build in CONTAINERS.items()
    ),
    *(  # no code in them: torch reads them too, slowly or not at all; we must stay bounded
        HostileCase(f"bounds-{name}", _file("pytorch_model.bin", build), unsafe=False)
        for name, build in BOUNDS.items()
    ),
    *(  # Burnpack whose counts and sizes claim what the file does not hold
        HostileCase(f"burnpack-{name}", _file("model.bpk", _bpk(name)), unsafe=False)
        for name in ("metadata-over-100mb", "over-100k-tensors", "cbor-too-deep", "field-cycle")
    ),
    *(  # GGUF whose counts and lengths claim what the file does not hold
        HostileCase(f"gguf-{name}", _file("model.gguf", _gguf(name)), unsafe=False)
        for name in ("huge-tensor-count", "array-count-huge", "key-past-eof", "dims-overflow")
    ),
]


def write_corpus(root: Path) -> dict[str, Path]:
    out = {}
    for case in CASES:
        folder = root / case.name
        folder.mkdir(parents=True)
        out[case.name] = case.build(folder, folder / "CANARY")
    return out


if __name__ == "__main__":
    for name, path in write_corpus(Path(sys.argv[1])).items():
        print(f"{name}\t{path}")
