"""What torch.load gives is what we give, or we refuse by name: tensor state (BUILD, Tensor.
__setstate__, _set_obj_state), a storage key named twice, Python 2 strings, and the benign values
and tensors torch reads (Counter, devices, complex128, conjugate views). Each test loads the same
file with torch itself and compares names, dtypes, shapes and bytes."""

from __future__ import annotations

import collections
import json
import warnings

import numpy as np
import pytest

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job

from .pickle_craft import B, G, R, Raw, dumps, legacy_file, storage, utils, v2, zip_file

torch = pytest.importorskip("torch")

F32 = np.arange(12, dtype=np.float32).tobytes()
HOOKS = R(G("collections", "OrderedDict"), ())
NAMES = {
    torch.float32: "F32", torch.float16: "F16", torch.float64: "F64", torch.uint8: "U8",
    torch.int64: "I64", torch.complex64: "C64",
}  # fmt: skip


def _f32(key="0", numel=12, legacy=False):
    return storage("FloatStorage", key, numel, *((None,) if legacy else ()))


def _torch_load(path, weights_only):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.load(path, weights_only=weights_only)


def _walk(obj, prefix=""):
    if isinstance(obj, torch.Tensor):
        yield prefix or "tensor", obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _walk(v, f"{prefix}.{i}" if prefix else str(i))


def _theirs(path, weights_only) -> dict:
    tensors = _walk(_torch_load(path, weights_only))
    return {
        name: (
            NAMES.get(t.dtype, str(t.dtype)),
            tuple(t.shape),
            t.resolve_conj()
            .resolve_neg()
            .contiguous()
            .view(-1)
            .view(torch.uint8)
            .numpy()
            .tobytes(),
        )
        for name, t in tensors
    }


def _ours(path) -> dict:
    with open_checkpoint(path) as ckpt:
        return {
            t.name: (t.dtype.name, tuple(t.shape), np.ascontiguousarray(ckpt.view(t)).tobytes())
            for t in ckpt.tensors
        }


def _write(tmp_path, obj, storages=None, name="m.pt", legacy=False) -> str:
    path = tmp_path / name
    storages = {"0": F32} if storages is None else storages
    if legacy:
        path.write_bytes(
            legacy_file(dumps(obj), {k: (len(v) // 4, v) for k, v in storages.items()})
        )
    else:
        path.write_bytes(zip_file(dumps(obj), storages))
    return str(path)


def _refusal(path) -> str:
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(path)
    return e.value.reason


def _torch_fails(path, weights_only) -> bool:
    try:
        _torch_load(path, weights_only)
    except Exception:
        return True
    return False


# -- BUILD on a tensor: Tensor.__setstate__ ---------------------------------------------------
def test_build_with_a_4_item_state_is_set_for_every_reference_as_torch_does(tmp_path):
    t = v2(_f32(), 0, (12,), (1,))
    # the memo holds t before its BUILD (as pickle writes it): "again" is the same tensor
    path = _write(tmp_path, {"t": B(t, (_f32(), 2, (2, 3), (1, 2))), "again": t})
    ours = _ours(path)
    assert ours == _theirs(path, True) == _theirs(path, False)
    assert ours["again"][:2] == ("F32", (2, 3))


def test_build_with_a_5_item_state_takes_the_data_of_its_first_item(tmp_path):
    other = v2(_f32(), 4, (2, 2), (2, 1))
    param = utils("_rebuild_parameter", v2(_f32(), 0, (12,), (1,)), True, HOOKS)
    tensor = v2(_f32(), 0, (12,), (1,))
    state = (other, None, HOOKS, False, False)  # a legacy Variable: data, …, requires_grad
    path = _write(tmp_path, {"p": B(param, state)})
    assert _ours(path) == _theirs(path, True) == _theirs(path, False)
    assert _ours(path)["p"][1] == (2, 2)
    # on a plain tensor only weights_only=False reads it (weights_only=True refuses): the same
    path = _write(tmp_path, {"t": B(tensor, state)}, name="t.pt")
    assert _ours(path) == _theirs(path, False) and _torch_fails(path, True)


def test_build_with_a_3_item_state_only_sets_requires_grad(tmp_path):
    param = utils("_rebuild_parameter", v2(_f32(), 1, (3,), (1,)), True, HOOKS)
    path = _write(tmp_path, {"p": B(param, (False, None, HOOKS))})
    assert _ours(path) == _theirs(path, True) == _theirs(path, False)


@pytest.mark.parametrize(
    ("state", "says"),
    [
        ((), "uses Tensor.__setstate__ with a 0-item state; not read"),
        ((v2(_f32(), 4, (2,), (1,)),), "uses Tensor.__setstate__ with a 1-item state; not read"),
        ({"foo": 1}, "uses Tensor.__setstate__ with a non-tuple state; not read"),
        (None, "uses Tensor.__setstate__ with a non-tuple state; not read"),
        (
            (storage("HalfStorage", "1", 4), 0, (2,), (1,)),
            "uses Tensor.__setstate__ to put a F32 tensor on a F16 storage, which torch refuses",
        ),
    ],
)
def test_build_forms_torch_refuses_or_reads_differently_are_refused_by_name(tmp_path, state, says):
    path = _write(tmp_path, {"t": B(v2(_f32(), 0, (12,), (1,)), state)}, {"0": F32, "1": F32[:8]})
    assert _refusal(path) == f"pickle {says}"
    # torch fails on each in one mode at least (weights_only=True reads () as an empty tensor)
    assert _torch_fails(path, False)


def test_build_without_a_state_form_torch_writes_was_ignored_before(tmp_path):
    """The defect: BUILD on a tensor kept the tensor as rebuilt, whatever its state said."""
    t = v2(_f32(), 0, (12,), (1,))
    path = _write(tmp_path, {"t": B(t, (_f32(), 6, (6,), (1,)))})
    assert _ours(path)["t"] == ("F32", (6,), F32[24:])


# -- state of _rebuild_parameter_with_state and _rebuild_from_type_v2: _set_obj_state ---------
TENSOR, PARAMETER = G("torch", "Tensor"), G("torch.nn.parameter", "Parameter")


def _from_type(state, new_type=TENSOR):
    args = (_f32(), 0, (12,), (1,), False, HOOKS)
    func = G("torch._utils", "_rebuild_tensor_v2")
    return R(G("torch._tensor", "_rebuild_from_type_v2"), (func, new_type, args, state))


@pytest.mark.parametrize(
    "state",
    [
        {"data": "other"},
        {"data": "half"},
        ({"tensor_model_parallel": True}, {"data": "other"}),  # (dict, slots)
        {"partition_dim": 0, "requires_grad": True, "_backward_hooks": {}},
        (None, {"zap": 2}),
        None,
        {},
    ],
)
@pytest.mark.parametrize("how", ["from_type", "from_type_parameter", "parameter_with_state"])
def test_a_saved_state_sets_data_and_attributes_as_torch_does(tmp_path, state, how):
    tensors = {
        "other": v2(_f32(), 4, (2, 2), (2, 1)),
        "half": v2(storage("HalfStorage", "1", 4), 0, (4,), (1,)),
    }

    def fill(x):
        if isinstance(x, dict):
            return {k: tensors.get(v, v) if isinstance(v, str) else v for k, v in x.items()}
        return tuple(fill(p) for p in x) if isinstance(x, tuple) else x

    state = fill(state)
    if how == "parameter_with_state":
        obj = utils("_rebuild_parameter_with_state", v2(_f32(), 0, (12,), (1,)), True, HOOKS, state)
    else:
        obj = _from_type(state, PARAMETER if how == "from_type_parameter" else TENSOR)
    path = _write(tmp_path, {"t": obj}, {"0": F32, "1": F32[:8]})
    assert _ours(path) == _theirs(path, True) == _theirs(path, False)


def test_data_in_a_saved_state_was_ignored_before(tmp_path):
    path = _write(tmp_path, {"t": _from_type({"data": v2(_f32(), 4, (2, 2), (2, 1))})})
    assert _ours(path)["t"] == ("F32", (2, 2), F32[16:32])


@pytest.mark.parametrize(
    ("state", "name"),
    [
        ({"real": 5.0}, "real"),  # torch fills the tensor with 5
        ({"imag": 1.0}, "imag"),
        ({"grad": None}, "grad"),
        ({"__class__": PARAMETER}, "__class__"),
        ({"shape": (3, 4)}, "shape"),
    ],
)
def test_a_saved_state_setting_what_a_tensor_intercepts_is_refused_by_name(tmp_path, state, name):
    path = _write(tmp_path, {"t": _from_type(state)})
    assert _refusal(path) == f"pickle uses Tensor.__setstate__ with {name!r} in its state; not read"


def test_a_state_that_torch_refuses_is_refused(tmp_path):
    for state, says in (
        ((1, 2, 3), "gives a tensor a 3-item state, which torch refuses"),
        ([("foo", 1)], "gives a tensor a state that is a list, which torch refuses"),
        ({"requires_grad": 1}, "gives a tensor a requires_grad that is not True or False"),
    ):
        path = _write(tmp_path, {"t": _from_type(state)})
        assert _refusal(path) == f"pickle {says}"
        assert _torch_fails(path, True) and _torch_fails(path, False)


def test_the_attributes_a_tensor_intercepts_are_those_of_the_installed_torch():
    from inspector.core.formats.torch_pickle.tensor_state import TENSOR_DESCRIPTORS

    found = {
        name
        for cls in torch.nn.Parameter.__mro__
        for name, v in vars(cls).items()
        if hasattr(type(v), "__set__")
    }
    assert found == TENSOR_DESCRIPTORS


def test_requires_grad_on_an_integer_tensor_is_refused_as_torch_does(tmp_path):
    longs = storage("LongStorage", "0", 2)
    for obj in (
        utils("_rebuild_tensor_v2", longs, 0, (2,), (1,), True, HOOKS),
        utils(
            "_rebuild_parameter",
            utils("_rebuild_tensor_v2", longs, 0, (2,), (1,), False, HOOKS),
            True,
            HOOKS,
        ),
    ):
        path = _write(tmp_path, {"t": obj}, {"0": F32[:16]})
        assert (
            _refusal(path)
            == "pickle makes a I64 tensor require grad, which torch refuses (not a float)"
        )
        assert _torch_fails(path, True) and _torch_fails(path, False)


# -- a storage key named twice ------------------------------------------------------------------
@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
@pytest.mark.parametrize("first", ["FloatStorage", "HalfStorage"])
def test_a_storage_key_named_again_with_another_dtype_keeps_the_first(tmp_path, legacy, first):
    second = "HalfStorage" if first == "FloatStorage" else "FloatStorage"
    numel = {"FloatStorage": 12, "HalfStorage": 24}
    view = (None,) if legacy else ()
    obj = {
        "a": v2(storage(first, "0", numel[first], *view), 0, (4,), (1,)),
        "b": v2(storage(second, "0", numel[second], *view), 1, (2, 2), (2, 1)),
    }
    path = tmp_path / "m.pt"
    if legacy:
        path.write_bytes(legacy_file(dumps(obj), {"0": (numel[first], F32)}))
    else:
        path.write_bytes(zip_file(dumps(obj), {"0": F32}))
    ours = _ours(path)
    assert ours == _theirs(path, True) == _theirs(path, False)
    assert {v[0] for v in ours.values()} == {"F32" if first == "FloatStorage" else "F16"}


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_a_storage_named_again_as_empty_keeps_the_first(tmp_path, legacy):
    """Only an empty *first* storage is not kept: named again as empty, the key still gives
    the one element it was first loaded with, as torch does."""
    view = (None,) if legacy else ()
    obj = {
        "a": v2(storage("FloatStorage", "0", 1, *view), 0, (1,), (1,)),
        "b": v2(storage("FloatStorage", "0", 0, *view), 0, (1,), (1,)),
    }
    path = _write(tmp_path, obj, {"0": F32[:4]}, legacy=legacy)
    ours = _ours(path)
    assert ours == _theirs(path, True) == _theirs(path, False)
    assert ours["b"] == ("F32", (1,), F32[:4])


def test_a_storage_named_empty_then_not_is_refused(tmp_path):
    key = "k" * 100  # named in the refusal clipped at 80 characters, and marked so
    obj = {
        "a": v2(storage("FloatStorage", key, 0, None), 0, (0,), (1,)),
        "b": v2(storage("HalfStorage", key, 4, None), 0, (4,), (1,)),
    }
    path = _write(tmp_path, obj, {key: b""}, legacy=True)  # torch: uninitialized memory
    assert _refusal(path) == (
        f"pickle names storage '{'k' * 80}'… first empty, then with 4 elements: "
        "torch.load reads uninitialized memory or fails"
    )


def test_a_storage_named_empty_twice_is_read_as_two_empty_tensors(tmp_path):
    obj = {
        "a": v2(storage("FloatStorage", "0", 0, None), 0, (0,), (1,)),
        "b": v2(storage("FloatStorage", "0", 0, None), 0, (0, 3), (3, 1)),
    }
    path = _write(tmp_path, obj, {"0": b""}, legacy=True)
    ours = _ours(path)
    assert ours == _theirs(path, True) == _theirs(path, False)
    assert ours == {"a": ("F32", (0,), b""), "b": ("F32", (0, 3), b"")}


def test_an_untyped_storage_under_v2_is_bytes_in_a_zip_and_unreadable_in_legacy(tmp_path):
    obj = {"t": v2(storage("UntypedStorage", "0", 48), 2, (4,), (1,))}
    path = _write(tmp_path, obj)
    assert _ours(path) == _theirs(path, False)  # weights_only=True: torch.UntypedStorage refused
    assert _ours(path)["t"] == ("U8", (4,), F32[2:6])
    obj = {"t": v2(storage("UntypedStorage", "0", 48, None), 0, (4,), (1,))}
    path = _write(tmp_path, obj, name="old.pt", legacy=True)
    assert _torch_fails(path, False)
    assert _refusal(path) == (
        "pickle names a torch.UntypedStorage in the legacy layout, which torch.load cannot read"
    )


# -- Python 2 strings ---------------------------------------------------------------------------
def _py2(op: str, text: bytes) -> Raw:
    if op == "STRING":
        return Raw(
            b"S'" + text.decode("latin-1").encode("unicode_escape").replace(b"'", b"\\'") + b"'\n"
        )
    if op == "BINSTRING":
        return Raw(b"T" + len(text).to_bytes(4, "little") + text)
    return Raw(b"U" + bytes([len(text)]) + text)


@pytest.mark.parametrize("op", ["STRING", "BINSTRING", "SHORT_BINSTRING"])
def test_python2_string_keys_are_utf8_as_torch_decodes_them(tmp_path, op):
    obj = {_py2(op, "café.weight".encode()): v2(_f32(), 0, (3,), (1,))}
    path = _write(tmp_path, obj)
    assert list(_ours(path)) == ["café.weight"]  # latin-1 gave 'cafÃ©.weight'
    assert _ours(path) == _theirs(path, False)
    if op == "SHORT_BINSTRING":  # the only one of the three weights_only=True reads
        assert _ours(path) == _theirs(path, True)
    obj = {_py2(op, b"caf\xe9"): v2(_f32(), 0, (3,), (1,))}  # latin-1 bytes: not UTF-8
    path = _write(tmp_path, obj, name="bad.pt")
    assert _torch_fails(path, False) and _torch_fails(path, True)
    assert _refusal(path) == (
        "pickle holds a Python 2 string that is not UTF-8, which torch.load cannot decode"
    )


# -- benign files torch.save writes ---------------------------------------------------------------
@pytest.fixture(params=["zip", "legacy"])
def benign(request, tmp_path):
    sd = {
        "w": torch.arange(6.0).reshape(2, 3),
        "z": torch.arange(6.0, dtype=torch.float64).to(torch.complex128).reshape(2, 3),
        "conj": torch.tensor([1 + 2j, 3 - 1j]).conj(),
        "neg": torch._neg_view(torch.ones(2)),
        "c64": torch.tensor([1 + 2j]),
        "counts": collections.Counter({"a": 3, "b": 1}),
        "device": torch.device("cuda", 0),
        "cpu": torch.device("cpu"),
        "p": torch.nn.Parameter(torch.ones(3)),
    }
    path = tmp_path / "m.pt"
    torch.save(sd, path, _use_new_zipfile_serialization=request.param == "zip")
    return path


LEFT_OUT = {
    "z": "complex128 tensor [2, 3]: safetensors has no complex128 dtype; left out of cast",
    "conj": "complex64 tensor [2]: saved as a conjugate view (torch.load conjugates the stored "
    "values); left out of cast",
    "neg": "float32 tensor [2]: saved as a negative view (torch.load negates the stored values); "
    "left out of cast",
}


def test_counter_devices_and_tensors_safetensors_cannot_hold_are_listed(benign):
    theirs = _theirs(benign, True)
    assert theirs == _theirs(benign, False)
    ours = _ours(benign)
    assert ours == {k: v for k, v in theirs.items() if k not in LEFT_OUT}
    kept = {k: v[:2] for k, v in theirs.items() if k in LEFT_OUT}
    assert kept == {"z": ("torch.complex128", (2, 3)), "conj": ("C64", (2,)), "neg": ("F32", (2,))}
    with open_checkpoint(benign) as ckpt:
        values = {v.name: (v.text, v.left_out) for v in ckpt.files[0].facts.values}
    assert values == {
        **{k: (text, True) for k, text in LEFT_OUT.items()},
        "counts.a": ("3", False),
        "counts.b": ("1", False),
        "device": ("'cuda:0'", False),
        "cpu": ("'cpu'", False),
    }
    loaded = _torch_load(benign, True)
    assert str(loaded["device"]) == "cuda:0" and dict(loaded["counts"]) == {"a": 3, "b": 1}


def test_cast_writes_the_rest_and_names_what_it_left_out(benign, tmp_path, capsys):
    from inspector.cli.dispatch import main

    out, report = tmp_path / "o.safetensors", tmp_path / "r.json"
    assert (
        main(["cast", str(benign), "--target", "F16", "-o", str(out), "--report", str(report)]) == 0
    )
    printed = capsys.readouterr().out
    assert "  3 tensors left out (not written):\n" in printed
    for name, text in LEFT_OUT.items():
        assert f"    {name}: {text}\n" in printed
    doc = json.loads(report.read_text())
    assert doc["left_out"] == [{"name": k, "why": v} for k, v in LEFT_OUT.items()]
    from safetensors.torch import load_file

    got = load_file(out)
    want = _torch_load(benign, True)
    assert sorted(got) == ["c64", "p", "w"]
    assert torch.equal(got["w"], want["w"].half()) and torch.equal(got["c64"], want["c64"])


def test_a_complex128_tensor_alone_is_listed_as_the_file_s_value(tmp_path):
    path = tmp_path / "one.pt"
    torch.save(torch.zeros(2, dtype=torch.complex128), path)
    with open_checkpoint(path) as ckpt:
        assert ckpt.tensors == []
        [value] = ckpt.files[0].facts.values
    assert (value.name, value.left_out) == ("tensor", True)
    with open_checkpoint(path) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F32"], str(tmp_path / "o.safetensors")))


# -- rebuilds torch reads that were refused ----------------------------------------------------------
@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_the_old_rebuild_tensor_reads_a_view_in_its_storage_dtype(tmp_path, legacy):
    obj = {"old": utils("_rebuild_tensor", _f32(legacy=legacy), 1, (2, 3), (1, 2))}
    path = _write(tmp_path, obj, legacy=legacy)
    assert _ours(path) == _theirs(path, True) == _theirs(path, False)
    assert _ours(path)["old"][:2] == ("F32", (2, 3))


def test_a_meta_tensor_is_listed_as_left_out(tmp_path):
    path = tmp_path / "m.pt"
    torch.save({"m": torch.empty(2, 3, device="meta"), "w": torch.ones(2)}, path)
    m = _torch_load(path, True)["m"]  # torch: a tensor with a shape and no bytes
    assert (m.device.type, m.dtype, tuple(m.shape)) == ("meta", torch.float32, (2, 3))
    assert list(_ours(path)) == ["w"]
    with open_checkpoint(path) as ckpt:
        [value] = ckpt.files[0].facts.values
    assert (value.name, value.text, value.left_out) == (
        "m",
        "float32 tensor [2, 3]: on the meta device, no data; left out of cast",
        True,
    )


@pytest.mark.parametrize("cls", ["OrderedDict", "Counter"])
def test_newobj_of_a_mutable_container_is_empty_as_torch_gives_it(tmp_path, cls):
    """NEWOBJ is cls.__new__(cls, *args): an OrderedDict's __new__ ignores its items, so torch
    gives it empty; filling it showed a tensor torch never gives."""
    from tests.core.pickle_craft import G, N, dumps, storage, v2, zip_file

    tensor = v2(storage("FloatStorage", "0", 2), 0, (2,), (1,))
    pkl = dumps({"hidden": N(G("collections", cls), ([("w", tensor)],))})
    path = tmp_path / "m.pt"
    path.write_bytes(zip_file(pkl, {"0": b"\x00" * 8}))
    ref = torch.load(path, weights_only=False)
    assert len(ref["hidden"]) == 0
    with open_checkpoint(path, keep_all=True) as ckpt:
        assert [t.name for t in ckpt.tensors] == []


# -- refusals worded exactly (mutation testing: a wrong or empty reason passed) ---------------
META = G("torch._utils", "_rebuild_meta_tensor_no_storage")
DEVICE = "a device is named with an index that is not a non-negative integer"


@pytest.mark.parametrize(
    ("obj", "says"),
    [
        (  # a 5-item state (a legacy Variable) whose data is not a tensor
            B(v2(_f32(), 0, (12,), (1,)), ("x", None, HOOKS, False, False)),
            "uses Tensor.__setstate__ with a 5-item state whose data is not a tensor, which "
            "torch refuses",
        ),
        (  # its requires_grad (item 3, not item 4) is judged on the tensor it is set on
            B(
                utils(
                    "_rebuild_tensor_v2",
                    storage("LongStorage", "0", 2),
                    0,
                    (2,),
                    (1,),
                    False,
                    HOOKS,
                ),
                (v2(storage("LongStorage", "0", 2), 0, (2,), (1,)), None, HOOKS, True, False),
            ),
            "makes a I64 tensor require grad, which torch refuses (not a float)",
        ),
        (  # a 3-item state: only requires_grad, judged on the tensor
            B(v2(storage("LongStorage", "0", 2), 0, (2,), (1,)), (True, None, HOOKS)),
            "makes a I64 tensor require grad, which torch refuses (not a float)",
        ),
        (  # a 4-item state whose storage is not a storage
            B(v2(_f32(), 0, (12,), (1,)), ("x", 0, (2,), (1,))),
            "uses Tensor.__setstate__ to set a tensor this tool cannot hold; not read",
        ),
        (  # a 4-item state onto a storage of a dtype safetensors has no name for
            B(v2(_f32(), 0, (12,), (1,)), (storage("ComplexDoubleStorage", "1", 1), 0, (1,), (1,))),
            "uses Tensor.__setstate__ to put a F32 tensor on a complex128 storage, which torch "
            "refuses",
        ),
        (
            _from_type({"data": "x"}),
            "uses a saved state that sets 'data' whose data is not a tensor, which torch refuses",
        ),
        (
            _from_type({"data": R(META, (G("torch", "float32"), (2,), (1,), False))}),
            "uses a saved state that sets 'data' on a tensor this tool cannot hold; not read",
        ),
        (  # requires_grad in a saved state is judged on the tensor it is set on
            R(
                G("torch._tensor", "_rebuild_from_type_v2"),
                (
                    G("torch._utils", "_rebuild_tensor_v2"),
                    TENSOR,
                    (storage("LongStorage", "0", 2), 0, (2,), (1,), False, HOOKS),
                    {"requires_grad": True},
                ),
            ),
            "makes a I64 tensor require grad, which torch refuses (not a float)",
        ),
        (  # the second part of a (dict, slots) state is judged after an empty first one
            _from_type((None, {"real": 5.0})),
            "uses Tensor.__setstate__ with 'real' in its state; not read",
        ),
        (
            R(META, ("float32", (2,), (1,), False)),
            "torch._utils._rebuild_meta_tensor_no_storage called with unexpected arguments",
        ),
        (
            R(
                G("torch._tensor", "_rebuild_from_type_v2"),
                (G("torch._utils", "_rebuild_tensor_v2"), TENSOR, ()),
            ),
            "torch._tensor._rebuild_from_type_v2 called with unexpected arguments",
        ),
        (  # what it would rebuild, shown clipped to 80 characters
            R(
                G("torch._tensor", "_rebuild_from_type_v2"),
                (G("torch._utils", "_rebuild_tensor_v2"), "c" * 100, (), {}),
            ),
            f"torch._tensor._rebuild_from_type_v2 rebuilds a {'c' * 80!r}…, not a tensor",
        ),
        # a device index torch refuses: negative, or a second one after "cuda:0"
        (R(G("torch", "device"), ("cuda", -1)), DEVICE),
        (R(G("torch", "device"), ("cuda", "0")), DEVICE),
        (R(G("torch", "device"), ("cuda:0", 1)), DEVICE),
    ],
)
def test_each_refused_tensor_state_or_device_is_worded_exactly(tmp_path, obj, says):
    path = _write(tmp_path, {"t": obj}, {"0": F32, "1": F32[:16]})
    assert _refusal(path) == f"pickle {says}"


def test_an_integer_tensor_that_does_not_require_grad_is_read(tmp_path):
    """torch < 0.4's _rebuild_tensor has no requires_grad (False), and a 5-item state takes it
    from its item 3, not 4: both integer tensors are read, where True would be refused."""
    longs = storage("LongStorage", "0", 2)
    path = _write(tmp_path, {"t": utils("_rebuild_tensor", longs, 0, (2,), (1,))}, {"0": F32[:16]})
    assert _ours(path) == {"t": ("I64", (2,), F32[:16])}
    user = {"t": B(v2(longs, 0, (2,), (1,)), (v2(longs, 0, (2,), (1,)), None, HOOKS, False, True))}
    path = _write(tmp_path, user, {"0": F32[:16]}, name="u.pt")
    assert _ours(path) == {"t": ("I64", (2,), F32[:16])}


# -- refusals found after the opcodes ran -------------------------------------------------------
def test_a_refusal_after_the_pickle_is_read_names_the_file(tmp_path):
    """The tree that contains itself, and a tensor placed past its storage: both found once
    the pickle is read, both said of the file they are in. torch.load refuses the second."""
    looped: dict = {"w": torch.ones(1)}
    looped["me"] = looped
    path = str(tmp_path / "loop.pt")
    torch.save(looped, path)
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(path)
    assert (e.value.path, e.value.reason) == (path, "pickle contains itself (a cycle at me)")
    path = _write(tmp_path, {"t": v2(_f32(), 2, (12,), (1,))}, name="past.pt")
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(path)
    assert (e.value.path, e.value.reason) == (
        path,
        "tensor 't' reaches past the end of its storage (56 > 48 bytes)",
    )
    assert _torch_fails(path, True) and _torch_fails(path, False)
