"""The records around the pickle, read as exactly as torch reads them: a storage's bytes must
be the size the pickle declares, and the ``byteorder`` record one of torch's two words. Each
case is checked against torch itself in the test: what it refuses, we refuse."""

from __future__ import annotations

import io
import warnings
import zipfile

import numpy as np
import pytest

from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint

from .pickle_craft import dumps, legacy_file, storage, v2, zip_file

torch = pytest.importorskip("torch")

F32 = np.arange(4, dtype=np.float32).tobytes()
STATE = {"w": v2(storage("FloatStorage", "0", 4), 0, (2,), (1,))}  # uses half the storage
LEGACY_STATE = {"w": v2(storage("FloatStorage", "0", 4, None), 0, (2,), (1,))}


def _torch_refuses(path) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.load(path, weights_only=True)
    except Exception:
        return True
    return False


def _zip_with_byteorder(order: bytes | None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("archive/data.pkl", dumps(STATE))
        if order is not None:
            zf.writestr("archive/byteorder", order)
        zf.writestr("archive/data/0", F32)
        zf.writestr("archive/version", b"3\n")
    return out.getvalue()


@pytest.mark.parametrize("stored", [F32 + b"\0" * 4, F32[:12]], ids=["longer", "shorter"])
@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_a_storage_of_another_size_than_declared_is_refused_as_torch_does(tmp_path, stored, legacy):
    path = tmp_path / "m.pt"
    if legacy:
        path.write_bytes(legacy_file(dumps(LEGACY_STATE), {"0": (len(stored) // 4, stored)}))
    else:
        path.write_bytes(zip_file(dumps(STATE), {"0": stored}))
    assert _torch_refuses(path)
    with pytest.raises(
        CheckpointError, match=r"storage holds \d+ bytes where the pickle declares 16"
    ):
        open_checkpoint(path)


@pytest.mark.parametrize(  # 16 bytes: the longest record read, shown whole
    "order", [b"", b"little\n", b" little", b"LITTLE", b"middle", b"little-endian!!!"]
)
def test_a_byteorder_record_torch_does_not_know_is_refused(tmp_path, order):
    path = tmp_path / "m.pt"
    path.write_bytes(_zip_with_byteorder(order))
    assert _torch_refuses(path)
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(path)
    assert e.value.reason == f"its byteorder record says {order!r}; torch refuses it"


@pytest.mark.parametrize("order", [b"little", None])
def test_little_or_no_byteorder_record_is_read(tmp_path, order):
    path = tmp_path / "m.pt"
    path.write_bytes(_zip_with_byteorder(order))
    assert not _torch_refuses(path)
    with open_checkpoint(path) as ckpt:
        assert ckpt.view(ckpt.tensors[0]).tolist() == [0.0, 1.0]
