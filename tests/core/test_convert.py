"""cast_checkpoint end to end: real writers in, safetensors/torch loaders out, values as torch casts."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch
from huggingface_hub import save_torch_state_dict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from inspector.core.cast.job import CastReport, TensorCastReport, cast_checkpoint, plan_cast
from inspector.core.dtypes import CAST_TARGETS, DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.formats.safetensors import read_header
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.save.writer import save_arrays

from .. import torch_dtypes

TORCH = torch_dtypes.FLOAT
INT_VIEW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(INT_VIEW[t.element_size()]) if t.is_floating_point() else t


def assert_bitwise(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    g, w = bits(got), bits(want)
    if want.is_floating_point():
        # torch's own NaN bits depend on where the value sits (vector vs tail loop): NaN == NaN
        nan = torch.isnan(want.float())
        assert torch.equal(torch.isnan(got.float()), nan)
        g, w = g[~nan], w[~nan]
    assert torch.equal(g, w)


def state_dict(seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {
        "encoder.weight": torch.randn(64, 33, generator=g, dtype=torch.float64) * 3,
        "encoder.bias": torch.randn(33, generator=g),
        "head.weight": (torch.randn(17, 5, generator=g) * 100).to(torch.float16),
        "norm.weight": torch.randn(40, generator=g).to(torch.bfloat16),
        "fp8.weight": torch.randn(30, generator=g).to(torch.float8_e4m3fn),
        "fp8b.weight": torch.randn(30, generator=g).to(torch.float8_e5m2),
        "position_ids": torch.arange(77),
        "mask": torch.rand(9, generator=g) > 0.5,
        "scalar": torch.tensor(2.5, dtype=torch.float64),
        "empty": torch.zeros(0, 3),
    }


def save_sharded(sd: dict[str, torch.Tensor], folder) -> None:
    """Shards as transformers writes them (huggingface_hub's own splitter and index)."""
    os.makedirs(folder, exist_ok=True)
    save_torch_state_dict(sd, str(folder), max_shard_size=5_000)


def cast(path, target: str, out, **kw) -> CastReport:
    with open_checkpoint(path) as ckpt:
        return run_job(cast_checkpoint(ckpt, DTYPES[target], str(out), **kw))


def expected(t: torch.Tensor, target: str) -> torch.Tensor:
    return t.to(TORCH[target]) if t.is_floating_point() else t


@pytest.mark.parametrize("target", CAST_TARGETS)
def test_single_file_matches_torch_and_loads(tmp_path, target):
    sd = state_dict()
    src = tmp_path / "model.safetensors"
    save_file(sd, str(src), metadata={"format": "pt", "origin": "test"})
    out = tmp_path / "out.safetensors"
    report = cast(src, target, out, chunk_bytes=256)  # many chunks per tensor
    loaded = load_file(str(out))
    assert set(loaded) == set(sd)
    for name, t in sd.items():
        assert_bitwise(loaded[name], expected(t, target))
    with safe_open(str(out), framework="pt") as f:
        assert f.metadata() == {"format": "pt", "origin": "test"}
    assert [t.name for t in read_header(str(out)).tensors] == [
        t.name for t in read_header(str(src)).tensors
    ]
    changed = [n for n, t in sd.items() if t.is_floating_point() and t.dtype != TORCH[target]]
    assert [r.name for r in report.tensors] == [
        t.name for t in read_header(str(src)).tensors if t.name in changed
    ]
    assert report.target == target
    assert sorted(os.listdir(tmp_path)) == ["model.safetensors", "out.safetensors"]


def test_source_order_and_metadata_are_kept(tmp_path):
    src = str(tmp_path / "in.safetensors")
    arrays = [
        ("zeta", DTYPES["F64"], np.linspace(-1, 1, 50)),
        ("alpha", DTYPES["I64"], np.arange(5, dtype=np.int64)),
        ("mid", DTYPES["F32"], np.ones((2, 2), dtype=np.float32)),
    ]
    save_arrays(src, arrays, {"k": "v"})
    out = str(tmp_path / "out.safetensors")
    cast(src, "F16", out)
    h = read_header(out)
    assert [t.name for t in h.tensors] == ["zeta", "alpha", "mid"]
    assert [t.start for t in h.tensors] == sorted(t.start for t in h.tensors)
    assert h.metadata == {"k": "v"}
    assert load_file(out)["alpha"].tolist() == [0, 1, 2, 3, 4]


def test_keep_globs_and_plan(tmp_path):
    sd = state_dict()
    src = tmp_path / "m.safetensors"
    save_file(sd, str(src))
    with open_checkpoint(src) as ckpt:
        plan = {
            t.name: d.name for t, d in plan_cast(ckpt, DTYPES["F16"], keep=["norm.*", "*.bias"])
        }
    assert plan["norm.weight"] == "BF16" and plan["encoder.bias"] == "F32"
    assert plan["encoder.weight"] == "F16" and plan["position_ids"] == "I64"
    assert plan["mask"] == "BOOL"
    out = tmp_path / "o.safetensors"
    report = cast(src, "F16", out, keep=["norm.*", "*.bias"])
    loaded = load_file(str(out))
    assert_bitwise(loaded["norm.weight"], sd["norm.weight"])
    assert_bitwise(loaded["encoder.bias"], sd["encoder.bias"])
    names = {r.name for r in report.tensors}
    assert "norm.weight" not in names and "encoder.bias" not in names
    assert "head.weight" not in names  # already F16


def test_sharded_checkpoint(tmp_path):
    sd = state_dict()
    src = tmp_path / "src"
    save_sharded(sd, src)
    index_name = "model.safetensors.index.json"
    shards = sorted(n for n in os.listdir(src) if n.endswith(".safetensors"))
    assert len(shards) > 1
    out = tmp_path / "out"  # does not exist yet; its parent does
    cast(src, "BF16", out, chunk_bytes=1000)
    assert sorted(os.listdir(out)) == sorted([*shards, index_name])
    src_index = json.loads((src / index_name).read_text())
    out_index = json.loads((out / index_name).read_text())
    assert out_index["weight_map"] == src_index["weight_map"]
    loaded = {}
    for s in shards:
        loaded.update(load_file(str(out / s)))
    for name, t in sd.items():
        assert_bitwise(loaded[name], expected(t, "BF16"))
    assert out_index["metadata"]["total_size"] == sum(
        t.numel() * t.element_size() for t in loaded.values()
    )
    with open_checkpoint(out) as again:
        assert {t.name for t in again.tensors} == set(sd)
    # the index keeps what else it said, in the layout transformers writes (indent 2)
    assert list(out_index) == list(src_index)
    text = (out / index_name).read_text()
    assert text == json.dumps(out_index, indent=2) + "\n"


def test_sharded_index_keeps_its_other_metadata(tmp_path):
    src = tmp_path / "src"
    save_sharded(state_dict(), src)
    index_path = src / "model.safetensors.index.json"
    index = json.loads(index_path.read_text())
    index["metadata"]["total_parameters"] = 12345
    index["metadata"]["format"] = "pt"
    index_path.write_text(json.dumps(index))
    cast(src, "F16", tmp_path / "out")
    meta = json.loads((tmp_path / "out" / index_path.name).read_text())["metadata"]
    assert meta["total_parameters"] == 12345 and meta["format"] == "pt"
    assert meta["total_size"] < index["metadata"]["total_size"]  # F32 → F16: the new size


def test_report_totals_and_document():
    rep = CastReport(
        "F16",
        [
            TensorCastReport("a", "F32", "F16", 1e-3, 1e-4, 1e-3, 0, 2, 0, False),
            TensorCastReport("b", "F32", "F16", 0.5, 0.1, 1.0, 3, 0, 1, False),
            TensorCastReport("c", "F64", "F16", 0.0, 0.0, 0.0, 0, 0, 0, True),
            TensorCastReport("d", "BF16", "F16", 0.0, 0.0, 0.0, 0, 0, 0, True),
            TensorCastReport("e", "F32", "F16"),  # cast with report=False: not measured
        ],
    )
    totals = {"tensors_cast": 5, "lossless": 2, "overflow": 3, "underflow": 2, "nan": 1}
    assert rep.totals() == totals
    doc = rep.to_json()
    assert list(doc) == ["target", "totals", "tensors"]
    assert (doc["target"], doc["totals"]) == ("F16", totals)
    assert [t["name"] for t in doc["tensors"]] == ["a", "b", "c", "d", "e"]
    assert json.loads(rep.to_json_text())["totals"] == totals


def test_cancel_leaves_nothing(tmp_path):
    sd = state_dict()
    src = tmp_path / "m.safetensors"
    save_file(sd, str(src))
    dest = tmp_path / "out.safetensors"
    dest.write_bytes(b"previous")
    with open_checkpoint(src) as ckpt:
        job = cast_checkpoint(ckpt, DTYPES["F16"], str(dest), chunk_bytes=64)
        for _ in range(10):
            next(job)
        assert any(n.endswith(".partial") for n in os.listdir(tmp_path))
        job.close()
    assert dest.read_bytes() == b"previous"
    assert sorted(os.listdir(tmp_path)) == ["m.safetensors", "out.safetensors"]


def test_cancel_sharded_removes_the_folder_it_made(tmp_path):
    src = tmp_path / "src"
    save_sharded(state_dict(), src)
    out = tmp_path / "out"
    with open_checkpoint(src) as ckpt:
        job = cast_checkpoint(ckpt, DTYPES["F16"], str(out), chunk_bytes=64)
        for _ in range(50):
            next(job)
        job.close()
    assert not out.exists()


def test_refuses_input_as_output_and_missing_folder(tmp_path):
    src = tmp_path / "m.safetensors"
    save_file(state_dict(), str(src))
    before = src.read_bytes()
    with pytest.raises(CheckpointError, match="input"):
        cast(src, "F16", src)
    assert src.read_bytes() == before
    with pytest.raises(CheckpointError, match="does not exist"):
        cast(src, "F16", tmp_path / "no" / "x.safetensors")
    sharded = tmp_path / "src"
    save_sharded(state_dict(), sharded)
    with pytest.raises(CheckpointError, match="input"):
        cast(sharded, "F16", sharded)
    assert sorted(os.listdir(tmp_path)) == ["m.safetensors", "src"]
    assert not any(n.endswith(".partial") for n in os.listdir(sharded))


def test_progress_is_monotonic_and_complete(tmp_path):
    src = tmp_path / "m.safetensors"
    save_file(state_dict(), str(src))
    with open_checkpoint(src) as ckpt:
        seen = []
        run_job(
            cast_checkpoint(ckpt, DTYPES["F16"], str(tmp_path / "o.safetensors"), chunk_bytes=100),
            seen.append,
        )
        total = ckpt.total_nbytes
    assert [p.done for p in seen] == sorted(p.done for p in seen)
    assert seen[-1].done == seen[-1].total == total
    assert all(p.name for p in seen)


# -- the precision report ------------------------------------------------------------------


def reference_report(orig: torch.Tensor, target: str) -> dict:
    """One rule for every target: overflowed values (to inf, or saturated by E4M3) are counted
    and left out of the error figures."""
    a = orig.double()
    b = orig.to(TORCH[target]).double()
    fin = torch.isfinite(a)
    sat = 464.0 if target == "F8_E4M3" else float("inf")
    overflow = (
        (fin & torch.isinf(b)) | (fin & (a.abs() > sat)) | (torch.isinf(a) & torch.isfinite(b))
    )
    keep = torch.isfinite(a) & torch.isfinite(b) & ~overflow
    err = (b - a).abs()[keep]
    nz = keep & (a != 0)
    rel = ((b - a).abs()[nz] / a.abs()[nz]) if nz.any() else torch.zeros(1, dtype=torch.float64)
    return {
        "max_abs_err": float(err.max()) if err.numel() else 0.0,
        "mean_abs_err": float(err.mean()) if err.numel() else 0.0,
        "max_rel_err": float(rel.max()),
        "overflow": int(overflow.sum()),
        "underflow": int(((a != 0) & (b == 0) & ~torch.isnan(a)).sum()),
        "nan": int(torch.isnan(b).sum()),
        "lossless": bool(torch.equal(a[~torch.isnan(a)], b[~torch.isnan(a)])),
    }


@pytest.mark.parametrize("target", ["F16", "BF16", "F8_E4M3", "F8_E5M2", "F32"])
def test_report_numbers_match_an_independent_computation(tmp_path, target):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(5000, generator=g, dtype=torch.float64) * 50
    x[:10] = torch.tensor(
        [1e6, -1e6, float("inf"), float("-inf"), float("nan"), 1e-30, -1e-40, 0.0, -0.0, 1e-8]
    )
    sd = {"x": x, "exact": torch.tensor([0.5, 1.0, -2.0, 0.0], dtype=torch.float64)}
    src = tmp_path / "m.safetensors"
    save_file(sd, str(src))
    report = cast(src, target, tmp_path / "o.safetensors", chunk_bytes=4096)
    by_name = {r.name: r for r in report.tensors}
    for name, t in sd.items():
        got = by_name[name].to_json()
        want = reference_report(t, target)
        assert got["from"] == "F64" and got["to"] == target and got["name"] == name
        for k in ("overflow", "underflow", "nan", "lossless"):
            assert got[k] == want[k], (name, k)
        for k in ("max_abs_err", "mean_abs_err", "max_rel_err"):
            assert got[k] == pytest.approx(want[k], rel=1e-12, abs=0), (name, k)
    assert by_name["exact"].lossless and by_name["exact"].max_abs_err == 0
    assert not by_name["x"].lossless


@pytest.mark.parametrize(
    ("source", "target"),
    [("F16", "F8_E4M3"), ("F16", "F8_E5M2"), ("BF16", "F8_E4M3"), ("BF16", "F16"), ("F16", "BF16")],
)
def test_reports_from_half_precision_sources_match_an_independent_computation(
    tmp_path, source, target
):
    """The error is measured in F32 from these sources (not in the source's own precision,
    where a - cast(a) would round)."""
    g = torch.Generator().manual_seed(4)
    x = (torch.randn(3000, generator=g) * 30).to(TORCH[source])
    x[:6] = torch.tensor([float("inf"), float("nan"), 1e-7, 0.0, 60000.0, -300.0])
    src = tmp_path / "m.safetensors"
    save_file({"x": x}, str(src))
    (got,) = cast(src, target, tmp_path / "o.safetensors").tensors
    got, want = got.to_json(), reference_report(x, target)
    for k in ("overflow", "underflow", "nan", "lossless"):
        assert got[k] == want[k], k
    for k in ("max_abs_err", "mean_abs_err", "max_rel_err"):
        assert got[k] == pytest.approx(want[k], rel=1e-12, abs=0), k


def test_report_off_gives_names_only(tmp_path):
    src = tmp_path / "m.safetensors"
    save_file(state_dict(), str(src))
    report = cast(src, "F16", tmp_path / "o.safetensors", report=False)
    assert report.tensors and all(
        r.max_abs_err is None and r.lossless is None for r in report.tensors
    )
    assert set(report.to_json()["tensors"][0]) == {
        "name", "from", "to", "max_abs_err", "mean_abs_err", "max_rel_err", "mean_rel_err",
        "rms_rel_err", "overflow", "underflow", "nan", "lossless",
    }  # fmt: skip
    assert report.tensors[0].mean_rel_err is None and report.tensors[0].rms_rel_err is None


def test_widening_is_reported_lossless_and_counts_nans(tmp_path):
    x = torch.tensor([1.0, float("nan"), float("inf"), -3.5]).to(torch.bfloat16)
    src = tmp_path / "m.safetensors"
    save_file({"x": x}, str(src))
    (r,) = cast(src, "F32", tmp_path / "o.safetensors").tensors
    assert r.lossless and r.nan == 1 and r.max_abs_err == 0 and r.overflow == 0


# -- property: any tensors, any target ---------------------------------------------------------

SRC_DTYPES = ["F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2", "I64", "I32", "U8", "BOOL"]


@st.composite
def tensors(draw):
    n = draw(st.integers(1, 4))
    out = {}
    for i in range(n):
        dtype = draw(st.sampled_from(SRC_DTYPES))
        shape = tuple(draw(st.lists(st.integers(0, 7), min_size=0, max_size=3)))
        seed = draw(st.integers(0, 2**31))
        rng = np.random.default_rng(seed)
        numel = int(np.prod(shape))
        raw = rng.integers(
            0, 256, numel * 8, dtype=np.uint8
        )  # random bit patterns: NaN, inf, subnormals
        if numel == 0:
            torch_dtype = TORCH.get(dtype) or {"I64": torch.int64, "I32": torch.int32}.get(dtype)
            t = torch.zeros(
                shape, dtype=torch_dtype or {"U8": torch.uint8, "BOOL": torch.bool}[dtype]
            )
        elif dtype == "BOOL":
            t = torch.from_numpy(raw[:numel] > 127).reshape(shape)
        elif dtype in TORCH:
            width = DTYPES[dtype].numpy.itemsize
            if draw(st.booleans()):
                t = torch.from_numpy(raw[: numel * width].copy()).view(TORCH[dtype]).reshape(shape)
            else:
                t = (
                    (torch.from_numpy(rng.standard_normal(numel)) * 10 ** rng.uniform(-6, 6))
                    .to(TORCH[dtype])
                    .reshape(shape)
                )
        else:
            np_dtype = {"I64": np.int64, "I32": np.int32, "U8": np.uint8}[dtype]
            width = np.dtype(np_dtype).itemsize
            t = torch.from_numpy(raw[: numel * width].copy().view(np_dtype)).reshape(shape)
        out[f"t{i}.{dtype.lower()}"] = t
    return out


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sd=tensors(), target=st.sampled_from(CAST_TARGETS), chunk=st.sampled_from([8, 24, 1 << 20]))
def test_round_trip_property(tmp_path_factory, sd, target, chunk):
    d = tmp_path_factory.mktemp("rt")
    src = d / "in.safetensors"
    save_file(sd, str(src), metadata={"format": "pt"})
    out = d / "out.safetensors"
    cast(src, target, out, chunk_bytes=chunk)
    loaded = load_file(str(out))
    for name, t in sd.items():
        assert_bitwise(loaded[name], expected(t, target))
    assert read_header(str(out)).metadata == {"format": "pt"}
    assert [t.name for t in read_header(str(out)).tensors] == [
        t.name for t in read_header(str(src)).tensors
    ]


def test_packed_and_exotic_floats_are_copied_byte_for_byte(tmp_path):
    from inspector.core.save.writer import TensorEntry, encode_header

    entries = [
        TensorEntry("fp4", DTYPES["F4"], (2, 5)),  # 10 values packed in 5 bytes
        TensorEntry("scales", DTYPES["F8_E8M0"], (3,)),
        TensorEntry("w", DTYPES["F32"], (2,)),
    ]
    payload = bytes(range(5)) + bytes([127, 128, 1]) + np.array([1.5, -2.25], np.float32).tobytes()
    src = tmp_path / "mx.safetensors"
    src.write_bytes(encode_header(entries, {"format": "mx"}) + payload)
    out = tmp_path / "o.safetensors"
    report = cast(src, "BF16", out, chunk_bytes=8)
    assert [r.name for r in report.tensors] == ["w"]
    h = read_header(str(out))
    assert [t.dtype.name for t in h.tensors] == ["F4", "F8_E8M0", "BF16"]
    data = out.read_bytes()[h.data_start :]
    assert data[:8] == payload[:8]
    with open_checkpoint(out) as ck:
        assert ck.view("w").astype(np.float32).tolist() == [1.5, -2.25]


def test_a_cast_closes_every_file_it_opens(tmp_path):
    """Every source handle is closed when the cast ends, sharded or not, not left to the garbage
    collector (a desktop app casts many files in one process)."""
    import gc
    import warnings

    src = tmp_path / "src"
    src.mkdir()
    state = {f"w{i}": torch.randn(64, 64, dtype=torch.float64) for i in range(6)}
    save_torch_state_dict(state, str(src), max_shard_size="40KB")
    single = tmp_path / "one.safetensors"
    save_file({"w": torch.randn(8, dtype=torch.float64)}, str(single))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for path, out in ((src, tmp_path / "out"), (single, tmp_path / "one_f32.safetensors")):
            with open_checkpoint(path) as ckpt:
                run_job(cast_checkpoint(ckpt, DTYPES["F32"], str(out)))
        gc.collect()
    unclosed = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert unclosed == []
