"""PyTorch pickles read by our interpreter agree with ``torch.load(weights_only=True)``: names,
dtypes, shapes, bytes; casts to safetensors are bit-identical to ``.to(target)``."""

from __future__ import annotations

import collections
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from safetensors import safe_open  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

from inspector.core.cast.job import cast_checkpoint  # noqa: E402
from inspector.core.diff import diff_checkpoints  # noqa: E402
from inspector.core.dtypes import DTYPES  # noqa: E402
from inspector.core.errors import CheckpointError  # noqa: E402
from inspector.core.formats.torch_pickle.reader import read_pickle_checkpoint  # noqa: E402
from inspector.core.layout import StridedTensorInfo  # noqa: E402
from inspector.core.opening import open_checkpoint  # noqa: E402
from inspector.core.progress import run_job  # noqa: E402
from inspector.core.stats import compute_stats  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# every dtype torch.save writes that safetensors has a name for
V2_DTYPES = [
    torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
    torch.int16, torch.int8, torch.uint8, torch.bool, torch.complex64,
]  # fmt: skip
V3_DTYPES = [
    torch.uint16, torch.uint32, torch.uint64, torch.float8_e4m3fn, torch.float8_e5m2,
    torch.float8_e4m3fnuz, torch.float8_e5m2fnuz, torch.float8_e8m0fnu,
]  # fmt: skip


def _values(dtype, shape, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g, dtype=torch.float64) * 50).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_complex:
        return torch.randn(shape, generator=g, dtype=dtype)
    info = torch.iinfo(dtype)
    return torch.randint(0, min(info.max, 1000), shape, generator=g).to(dtype)


def _corpus(v3: bool) -> dict:
    sd = collections.OrderedDict()
    for i, dt in enumerate(V2_DTYPES + (V3_DTYPES if v3 else [])):
        sd[f"t.{str(dt).removeprefix('torch.')}"] = _values(dt, (3, 5), i)
    base = torch.randn(6, 8, dtype=torch.float64)
    sd["view.transposed"] = base.t()
    sd["view.sliced"] = base[2:5, 1:7]
    sd["view.stepped"] = base[::2, ::3]
    sd["view.row"] = base[4]
    sd["view.expanded"] = torch.randn(1, 4).expand(3, 4)
    sd["scalar"] = torch.tensor(2.5, dtype=torch.float64)
    sd["empty"] = torch.zeros(0, 3)
    sd["tied.a"] = sd["t.float32"]
    sd["tied.b"] = sd["t.float32"]
    sd["param"] = torch.nn.Parameter(torch.randn(2, 2, dtype=torch.bfloat16))
    return {
        "state_dict": sd,
        "layers": [torch.ones(2), {"w": torch.arange(4.0).double()}],
        "epoch": 7,
        "hyper_parameters": {"lr": 0.001, "name": "tiny", "betas": (0.9, 0.999)},
        "optimizer_states": [],
    }


def _walk(obj, prefix=""):
    if isinstance(obj, torch.Tensor):
        yield prefix or "tensor", obj
        return
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, (list, tuple)):
        items = enumerate(obj)
    else:
        return
    for k, v in items:
        yield from _walk(v, f"{prefix}.{k}" if prefix else str(k))


def _bytes(t) -> bytes:
    t = t.contiguous()
    return t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""


@pytest.fixture(scope="module", params=["zip", "legacy"])
def saved(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    path = folder / "model.pt"
    if request.param == "zip":
        torch.save(_corpus(v3=True), path)
    else:  # torch's legacy loader cannot read back untyped (v3) storages it writes
        torch.save(_corpus(v3=False), path, _use_new_zipfile_serialization=False)
    return path


def test_names_dtypes_shapes_and_bytes_match_torch_load(saved):
    ref = dict(_walk(torch.load(saved, weights_only=True)))
    with open_checkpoint(saved, keep_all=True) as ckpt:  # every tensor, as torch.load
        assert [t.name for t in ckpt.tensors] == list(ref)
        for t in ckpt.tensors:
            want = ref[t.name]
            assert t.dtype.name == _safetensors_name(want.dtype), t.name
            assert t.shape == tuple(want.shape), t.name
            got = np.ascontiguousarray(ckpt.view(t))
            assert got.tobytes() == _bytes(want), t.name
    assert any(isinstance(t, StridedTensorInfo) for t in ckpt.tensors)


def test_a_folder_of_one_training_checkpoint_keeps_everything_when_asked(saved):
    """A folder opens its one pickle as the file would: the model's weights alone by default,
    every tensor with keep_all (``cast --keep-all FOLDER``), not the model's alone either way."""
    with (
        open_checkpoint(saved, keep_all=True) as file,
        open_checkpoint(saved.parent, keep_all=True) as folder,
    ):
        assert [t.name for t in folder.tensors] == [t.name for t in file.tensors]
        assert folder.training is None
    with open_checkpoint(saved) as file, open_checkpoint(saved.parent) as folder:
        assert [t.name for t in folder.tensors] == [t.name for t in file.tensors]
        every = dict(_walk(torch.load(saved, weights_only=True)))
        assert folder.training is not None and len(folder.tensors) < len(every)


def test_non_tensor_leaves_are_listed(saved):
    with open_checkpoint(saved, keep_all=True) as ckpt:  # every tensor, as torch.load
        values = {v.name: v.text for v in ckpt.files[0].facts.values}
    assert values == {
        "epoch": "7",
        "hyper_parameters.lr": "0.001",
        "hyper_parameters.name": "'tiny'",
        "hyper_parameters.betas.0": "0.9",
        "hyper_parameters.betas.1": "0.999",
        "optimizer_states": "[]",
    }


@pytest.mark.parametrize("target", ["F32", "F16", "BF16"])
def test_cast_to_safetensors_is_bit_identical_to_torch(saved, tmp_path, target):
    out = tmp_path / "model.safetensors"
    with open_checkpoint(saved, keep_all=True) as ckpt:  # every tensor, as torch.load
        run_job(cast_checkpoint(ckpt, DTYPES[target], str(out)))
    tdt = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}[target]
    got = load_file(out)
    ref = dict(_walk(torch.load(saved, weights_only=True)))
    assert sorted(got) == sorted(ref)
    for name, t in ref.items():
        # block-scaled and FNUZ formats are not cast element-wise (DESIGN: cast semantics)
        kept = t.dtype in (torch.float8_e4m3fnuz, torch.float8_e5m2fnuz, torch.float8_e8m0fnu)
        want = t.to(tdt) if t.is_floating_point() and not kept else t
        assert got[name].dtype == want.dtype, name
        assert _bytes(got[name]) == _bytes(want), name
    with safe_open(out, "pt") as f:
        assert f.metadata() == {"format": "pt"}  # transformers loads it


def test_diff_and_stats_read_strided_views(saved, tmp_path):
    out = tmp_path / "copy.safetensors"
    with open_checkpoint(saved, keep_all=True) as ckpt:  # every tensor, as torch.load
        run_job(cast_checkpoint(ckpt, DTYPES["F64"], str(out)))
        stats = run_job(compute_stats(ckpt))
        ref = dict(_walk(torch.load(saved, weights_only=True)))
        want = ref["state_dict.view.transposed"]
        assert stats["state_dict.view.transposed"].max == float(want.max())
        with open_checkpoint(out) as copy:
            result = run_job(diff_checkpoints(ckpt, copy))
    assert {r.status.value for r in result} <= {"equal", "dtype_only"}
    assert len(result) == len(ckpt.tensors)


def test_root_tensor_and_sharded_bin_index(tmp_path):
    torch.save(torch.arange(6.0).reshape(2, 3), tmp_path / "one.pt")
    with open_checkpoint(tmp_path / "one.pt") as ckpt:
        assert [t.name for t in ckpt.tensors] == ["tensor"]

    from huggingface_hub import save_torch_state_dict

    folder = tmp_path / "hf"
    folder.mkdir()
    sd = {f"layers.{i}.weight": torch.randn(64, 64, dtype=torch.float64) for i in range(6)}
    sd["embed.weight"] = torch.randn(32, 64, dtype=torch.bfloat16)
    save_torch_state_dict(sd, folder, safe_serialization=False, max_shard_size="80KB")
    shards = sorted(p.name for p in folder.iterdir() if p.suffix == ".bin")
    assert len(shards) > 1 and (folder / "pytorch_model.bin.index.json").exists()
    with open_checkpoint(folder) as ckpt:
        assert ckpt.is_sharded and len(ckpt.files) == len(shards)
        assert sorted(t.name for t in ckpt.tensors) == sorted(sd)
        out = tmp_path / "out"
        run_job(cast_checkpoint(ckpt, DTYPES["F32"], str(out)))
    names = sorted(os.listdir(out))
    assert "model.safetensors.index.json" in names
    assert [n for n in names if n.endswith(".safetensors")] == [
        s.replace("pytorch_model", "model").replace(".bin", ".safetensors") for s in shards
    ]
    with open_checkpoint(out) as converted:
        for t in converted.tensors:
            assert np.asarray(converted.view(t)).tobytes() == _bytes(sd[t.name].float())


def test_reads_and_casts_with_torch_unimportable(tmp_path):
    torch.save({"w": torch.randn(3, 4, dtype=torch.float64).t()}, tmp_path / "m.pt")
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from inspector.cli.dispatch import main\n"
        "sys.exit(main(['cast', sys.argv[1], '--target', 'F32', '-o', sys.argv[2]]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "m.pt"), str(tmp_path / "m.safetensors")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    got = load_file(tmp_path / "m.safetensors")["w"]
    want = torch.load(tmp_path / "m.pt", weights_only=True)["w"].float()
    assert torch.equal(got, want)


def _safetensors_name(dtype) -> str:
    return {
        torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
        torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
        torch.uint8: "U8", torch.bool: "BOOL", torch.complex64: "C64", torch.uint16: "U16",
        torch.uint32: "U32", torch.uint64: "U64", torch.float8_e4m3fn: "F8_E4M3",
        torch.float8_e5m2: "F8_E5M2", torch.float8_e4m3fnuz: "F8_E4M3FNUZ",
        torch.float8_e5m2fnuz: "F8_E5M2FNUZ", torch.float8_e8m0fnu: "F8_E8M0",
    }[dtype]  # fmt: skip


def test_a_plain_pickle_and_an_empty_file_are_named_so(tmp_path):
    plain = tmp_path / "plain.pt"
    plain.write_bytes(pickle.dumps({"epoch": 3}, protocol=2))
    with pytest.raises(CheckpointError) as e:
        read_pickle_checkpoint(str(plain))
    assert (e.value.path, e.value.reason) == (
        str(plain),
        "is a plain Python pickle, not a torch.save checkpoint (no PyTorch magic number)",
    )
    empty = tmp_path / "empty.pt"
    empty.write_bytes(b"")
    with pytest.raises(CheckpointError) as e:
        read_pickle_checkpoint(str(empty))
    assert (e.value.path, e.value.reason) == (str(empty), "file is empty")


def test_damage_in_a_legacy_file_names_the_file(tmp_path):
    path = tmp_path / "old.pt"
    torch.save({"w": torch.ones(4)}, path, _use_new_zipfile_serialization=False)
    data = path.read_bytes()
    for cut, says in ((len(data) - 3, "truncated"), (40, "pickle")):
        path.write_bytes(data[:cut])
        with pytest.raises(CheckpointError, match=says) as e:
            read_pickle_checkpoint(str(path))
        assert e.value.path == str(path)


def test_a_second_tensor_of_a_long_name_is_named_clipped_at_80_characters(tmp_path):
    long = "x" * 100
    path = tmp_path / "twice.pt"
    torch.save({f"a.{long}": torch.ones(1), "a": {long: torch.zeros(1)}}, path)
    header = read_pickle_checkpoint(str(path))
    (note,) = [v for v in header.facts.values if v.text.startswith("a second")]
    assert note.text.startswith(f"a second tensor named '{('a.' + long)[:80]}'… once keys")


def test_two_tensors_named_alike_once_joined_are_both_listed_and_cast(tmp_path):
    """{"a.b": t1, "a": {"b": t2}}: torch.load reads it; both tensors are shown and written,
    the second as "a.b#2" with a value saying why (it was refused whole)."""
    path = tmp_path / "twice.pt"
    torch.save({"a.b": torch.ones(1), "a": {"b": torch.zeros(1)}}, path)
    header = read_pickle_checkpoint(str(path))
    assert [t.name for t in header.tensors] == ["a.b", "a.b#2"]
    (note,) = [v for v in header.facts.values if v.name == "a.b#2"]
    assert note.text == (
        "a second tensor named 'a.b' once keys are joined with dots: listed and written under "
        "this name"
    )
    from inspector.core.cast.job import cast_checkpoint
    from inspector.core.dtypes import DTYPES
    from inspector.core.progress import run_job

    out = tmp_path / "o.safetensors"
    with open_checkpoint(path) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(out)))
    with open_checkpoint(out) as back:
        assert back.view("a.b").tolist() == [1.0] and back.view("a.b#2").tolist() == [0.0]


def test_a_legacy_header_or_key_list_that_is_wrong_names_the_file(tmp_path):
    from inspector.core.formats.torch_pickle.archive import LEGACY_MAGIC
    from inspector.core.formats.torch_pickle.machine import PickleMachine
    from inspector.core.formats.torch_pickle.policies import LoadPolicy

    path = tmp_path / "old.pt"
    path.write_bytes(b"".join(pickle.dumps(v, protocol=2) for v in (LEGACY_MAGIC, 1000, {})))
    with pytest.raises(CheckpointError) as e:
        read_pickle_checkpoint(str(path))
    assert (e.value.path, e.value.reason) == (
        str(path),
        "uses torch legacy protocol 1000; only 1001 is known",
    )
    torch.save({"w": torch.ones(4)}, path, _use_new_zipfile_serialization=False)
    data = path.read_bytes()
    pos = 0
    for _ in range(4):  # magic, protocol, system info, the object: the key list starts here
        _obj, pos = PickleMachine(data, LoadPolicy()).run(pos)
    path.write_bytes(data[: pos + 3])
    with pytest.raises(CheckpointError) as e:
        read_pickle_checkpoint(str(path))
    assert e.value.path == str(path) and e.value.reason.startswith("pickle ")
