"""Our ``scan`` verdict against picklescan's on the same files. Where they disagree, the reason is
in docs/reliability.md ("scan vs picklescan"): we refuse by allowlist, picklescan flags by blocklist."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

from inspector.core.scan.walk import ScanStatus, scan_file

from .test_torch_pickle_hostile import PAYLOADS, _global, _str

torch = pytest.importorskip("torch")
scanner = pytest.importorskip("picklescan.scanner")

# name -> (pickle bytes, picklescan flags it as dangerous)
EXTRA = {
    "runpy": (b"\x80\x02" + _global("runpy", "run_path") + _str("x") + b"\x85R.", True),
    "getattr": (
        b"\x80\x02"
        + _global("builtins", "getattr")
        + b"("
        + _global("collections", "OrderedDict")
        + _str("fromkeys")
        + b"tR.",
        True,
    ),
    "computed_name": (
        b"\x80\x04" + _global("collections", "OrderedDict") + b")R" + _str("x") + b"\x93)R.",
        True,
    ),
    # picklescan does not follow EXT opcodes (the registry decides what they import)
    "extension_code": (b"\x80\x02\x82\x07)R.", False),
    # picklescan does not look at BUILD: this one sets an attribute of an allowed class
    "build_on_class": (
        b"\x80\x02" + _global("collections", "OrderedDict") + b"}" + _str("x") + b"K\x01sb0N.",
        False,
    ),
    # picklescan: "suspicious" or "innocuous", not dangerous; not tensor machinery, so refused here
    "torch_load": (b"\x80\x02" + _global("torch", "load") + _str("x") + b"\x85R.", False),
    "importlib": (
        b"\x80\x02" + _global("importlib", "import_module") + _str("os") + b"\x85R.",
        False,
    ),
    "numpy_array": (pickle.dumps({"a": np.zeros(3)}), False),
}


def _benign() -> dict[str, bytes]:
    out = {}
    for name, kwargs in (("zip", {}), ("legacy", {"_use_new_zipfile_serialization": False})):
        buf = io.BytesIO()
        torch.save({"sd": {"w": torch.randn(2, 3).t(), "b": torch.zeros(2).half()}}, buf, **kwargs)
        out[name] = buf.getvalue()
    return out


def _verdicts(path):
    ours = scan_file(str(path)).status
    theirs = scanner.scan_file_path(str(path))
    return ours, theirs.infected_files > 0


@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: p.name)
def test_both_flag_every_payload(tmp_path, payload):
    path = tmp_path / payload.file
    path.write_bytes(payload.build(tmp_path, "true", tmp_path / "CANARY"))
    assert _verdicts(path) == (ScanStatus.REFUSED, True)


@pytest.mark.parametrize("name", sorted(EXTRA))
def test_known_disagreements(tmp_path, name):
    data, picklescan_flags = EXTRA[name]
    path = tmp_path / f"{name}.bin"
    path.write_bytes(data)
    assert _verdicts(path) == (ScanStatus.REFUSED, picklescan_flags)


@pytest.mark.parametrize("name", ["zip", "legacy"])
def test_both_pass_real_checkpoints(tmp_path, name):
    path = tmp_path / f"{name}.pt"
    path.write_bytes(_benign()[name])
    assert _verdicts(path) == (ScanStatus.CLEAN, False)
