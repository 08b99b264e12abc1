"""Tests that close the gaps a mutation run found: each fails with its mutation in place.

1. F8_E4M3's largest finite value 448 -> 480        (saturation between the thresholds)
2. header bound ``> 100_000_000`` -> ``>=``         (exactly 100,000,000 bytes is valid)
3. the writer's fsync before the rename removed    (write -> fsync -> rename -> fsync folder)
4. tensors written in data-offset order            (header order is the data order of the output)
5. underflow counting zeros that were already zero
Plus the report rule of the reliability issue (17): overflow is out of the error figures.
"""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest
import torch
from safetensors import safe_open

from inspector.core.cast.job import cast_checkpoint
from inspector.core.cast.kernels import cast_array
from inspector.core.dtypes import DTYPES
from inspector.core.formats.safetensors import read_header
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.save.writer import AtomicWriter, save_arrays

F32, F16, F64, E4M3 = DTYPES["F32"], DTYPES["F16"], DTYPES["F64"], DTYPES["F8_E4M3"]


def report_of(tmp_path, values, src=F32, dst=F16):
    path = tmp_path / "in.safetensors"
    save_arrays(path, [("x", src, np.asarray(values, dtype=src.numpy))])
    with open_checkpoint(path) as ckpt:
        (rep,) = run_job(cast_checkpoint(ckpt, dst, str(tmp_path / "out.safetensors"))).tensors
    return rep


# -- 1 ------------------------------------------------------------------------------------------


def test_e4m3_saturates_between_max_and_the_rounding_limit(tmp_path):
    x = torch.tensor([460.0, 470.0, -470.0, 1000.0], dtype=torch.float32)
    want = x.to(torch.float8_e4m3fn).view(torch.uint8).numpy()
    got = cast_array(x.numpy(), F32, E4M3).view(np.uint8)
    assert got.tolist() == want.tolist()
    assert x.to(torch.float8_e4m3fn).float().tolist() == [448.0, 448.0, -448.0, 448.0]
    rep = report_of(tmp_path, [460.0, 470.0, 1.0], dst=E4M3)
    assert rep.overflow == 1  # 460 rounds to 448 (below 464); 470 saturates
    assert rep.max_abs_err == pytest.approx(12.0)  # 460 -> 448; the saturated 470 is left out


# -- 2 ------------------------------------------------------------------------------------------


def test_header_of_exactly_100_000_000_bytes_is_accepted_like_the_reference(tmp_path):
    n = 100_000_000
    path = tmp_path / "edge.safetensors"
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", n))
        f.write(b"{}")
        f.write(b" " * (n - 2))
    with safe_open(str(path), framework="np") as ref:
        assert list(ref.keys()) == []
    assert read_header(path).tensors == []


# -- 3 ------------------------------------------------------------------------------------------


def test_writer_fsyncs_the_data_before_the_rename_and_the_folder_after(tmp_path, monkeypatch):
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        target = os.readlink(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self/fd") else str(fd)
        events.append(("fsync", os.path.basename(target)))
        return real_fsync(fd)

    def replace(a, b):
        events.append(("replace", os.path.basename(b)))
        return real_replace(a, b)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    dest = tmp_path / "out.safetensors"
    with AtomicWriter() as w:
        f = w.open(str(dest))
        tmp_name = os.path.basename(f.tmp_path)
        f.write(b"data")
        w.commit()
    kinds = [e for e in events if e[1] in (tmp_name, "out.safetensors", tmp_path.name)]
    assert kinds.index(("fsync", tmp_name)) < kinds.index(("replace", "out.safetensors"))
    assert ("fsync", tmp_path.name) in kinds[kinds.index(("replace", "out.safetensors")) :]


# -- 4 ------------------------------------------------------------------------------------------


def test_cast_lays_out_data_in_header_order_when_offsets_are_out_of_order(tmp_path):
    import json

    header = {
        "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]},
        "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
    }
    text = json.dumps(header).encode()
    src = tmp_path / "odd.safetensors"
    data = np.array([1, 2], np.float32).tobytes() + np.array([30, 40], np.float32).tobytes()
    src.write_bytes(struct.pack("<Q", len(text)) + text + data)
    out = tmp_path / "out.safetensors"
    with open_checkpoint(src) as ckpt:
        run_job(cast_checkpoint(ckpt, F64, str(out)))
    h = read_header(out)
    assert [t.name for t in h.tensors] == ["b", "a"]
    assert h.tensors[0].data_offsets == (0, 16)  # b first in the data too
    with safe_open(str(out), framework="np") as f:
        assert f.get_tensor("a").tolist() == [1.0, 2.0]
        assert f.get_tensor("b").tolist() == [30.0, 40.0]


# -- 5 ------------------------------------------------------------------------------------------


def test_underflow_counts_only_values_that_became_zero(tmp_path):
    rep = report_of(tmp_path, [0.0, -0.0, 1e-10, 1.0001])
    assert rep.underflow == 1 and rep.overflow == 0


# -- reliability 17: one rule for overflow ------------------------------------------------------


def test_all_values_overflowed_gives_no_error_figures_rather_than_zero(tmp_path):
    rep = report_of(tmp_path, [1e6, -1e6, 7e4])
    assert rep.overflow == 3 and not rep.lossless
    assert rep.max_abs_err is None and rep.mean_abs_err is None and rep.max_rel_err is None


def test_f16_overflow_and_e4m3_saturation_follow_the_same_rule(tmp_path):
    f16 = report_of(tmp_path, [1e6, 1.5], dst=F16)
    e4m3 = report_of(tmp_path, [1e6, 1.5], dst=E4M3)
    assert f16.overflow == e4m3.overflow == 1
    assert f16.max_abs_err == e4m3.max_abs_err == 0.0  # only 1.5 is measured: exact in both


@pytest.mark.parametrize(
    ("src", "dst"), [("F16", "F32"), ("F32", "F64"), ("BF16", "F64"), ("F8_E4M3", "F16")]
)
def test_widening_counts_exactly_the_nans(tmp_path, src, dst):
    """Survivors of a partial mutmut run: NaN counting on the widening (exact) path."""
    s, d = DTYPES[src], DTYPES[dst]
    values = np.array([np.nan, 1.0, -0.5, np.nan, 0.0, np.nan], dtype=np.float32).astype(s.numpy)
    rep = report_of(tmp_path, values, src=s, dst=d)
    assert rep.nan == 3 and rep.lossless and rep.overflow == rep.underflow == 0
    assert rep.max_abs_err == 0.0
