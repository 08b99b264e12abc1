"""Placeholders cannot be turned into execution, nor into unbounded work. Each file is written
byte by byte (``pickle_craft``) beside one plain tensor ``w``: the tensor must still read, the
placeholder must stay inert wherever the pickle puts it (called, called with an allowlisted
callable, given a ``__setstate__``, used as a persistent id, a storage class, a dict key, nested
or shared without end), and nothing the file names is ever imported or called."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from inspector.cli.dispatch import main
from inspector.core.errors import CheckpointError, RefusedPickleError
from inspector.core.formats.torch_pickle import pickle_facts
from inspector.core.formats.torch_pickle.machine import PickleError, PickleMachine
from inspector.core.formats.torch_pickle.names import flatten
from inspector.core.formats.torch_pickle.policies import LoadPolicy
from inspector.core.formats.torch_pickle.records import TensorRecord
from inspector.core.formats.torch_pickle.unknown import Unknown, UnreadTensor
from inspector.core.opening import open_checkpoint
from tests.core.pickle_craft import B, G, N, P, R, dumps, storage, v2, zip_file

W = v2(storage("FloatStorage", "0", 2), 0, (2,), (1,))
W_BYTES = struct.pack("<2f", 1.5, -2.0)


def _open(tmp_path, obj, name="m.pt"):
    """``{"w": <a plain tensor>, "x": obj}`` as a torch zip; (values by name, tensors, facts)."""
    path = tmp_path / name
    path.write_bytes(zip_file(dumps({"w": W, "x": obj}), {"0": W_BYTES}))
    with open_checkpoint(path) as ckpt:
        assert ckpt.view("w").tolist() == [1.5, -2.0]  # the plain tensor is read regardless
        facts = pickle_facts(ckpt.files[0])
        return {v.name: v.text for v in facts.values}, [t.name for t in ckpt.tensors], facts


def _load(obj):
    """The object the machine builds for ``obj`` (no archive: storages are only named)."""
    return PickleMachine(dumps(obj), LoadPolicy()).run(0)[0]


def test_calling_a_placeholder_with_allowlisted_callables_calls_nothing(tmp_path, monkeypatch):
    from inspector.core.formats.torch_pickle import allowlist

    calls = []
    for cls in (allowlist._RebuildTensor, allowlist._RebuildFromType):
        real = cls.call
        monkeypatch.setattr(cls, "call", lambda self, a, r=real: calls.append(self) or r(self, a))
    rebuild = G("torch._utils", "_rebuild_tensor_v2")
    evil = R(G("evil", "apply"), (rebuild, G("collections", "OrderedDict"), G("os", "system")))
    again = R(evil, (G("builtins", "eval"), "1"))  # the placeholder's result, called again
    values, tensors, facts = _open(tmp_path, [evil, again])
    assert tensors == ["w"] and len(calls) == 1  # w's own rebuild, nothing else
    assert values["x.0"] == "evil.apply object, not built (unknown code, not executed)"
    assert values["x.1"] == "evil.apply object, not built (unknown code, not executed)"
    assert facts.unknown == ["evil.apply", "os.system", "builtins.eval"]
    found = _load(again)
    assert isinstance(found, Unknown) and found.called and found.args == (found.args[0], "1")


def test_an_unknown_function_given_a_storage_is_a_tensor_not_read(tmp_path):
    """functools.partial(_rebuild_tensor_v2, storage, …) would rebuild a tensor: named, not read,
    and the allowlisted function it carries is not called either."""
    partial = R(
        G("functools", "partial"),
        (G("torch._utils", "_rebuild_tensor_v2"), storage("FloatStorage", "0", 2), 0, (2,)),
    )
    values, tensors, _ = _open(tmp_path, R(partial, ((1,), False, None)))
    assert tensors == ["w"]
    assert values["x"] == (
        "tensor not read: its rebuild needs functools.partial, which was not executed; "
        "left out of cast"
    )


@pytest.mark.parametrize(
    "obj, needs",
    [
        (v2(P(("storage", G("evil", "Storage"), "0", "cpu", 2)), 0, (2,), (1,)), "a storage of class evil.Storage"),
        (v2(storage("FloatStorage", "0", 2), 0, N(G("evil", "Size"), ()), (1,)), "evil.Size"),
        (R(G("torch._utils", "_rebuild_parameter"), (N(G("evil", "T"), ()), False, {})), "evil.T"),
        (R(G("torch._tensor", "_rebuild_from_type_v2"), (G("evil", "f"), G("torch", "Tensor"), (), {})), "evil.f"),
        (R(G("torch._tensor", "_rebuild_from_type_v2"), (G("torch._utils", "_rebuild_tensor_v2"), G("evil", "Sub"), (storage("FloatStorage", "0", 2), 0, (2,), (1,), False, {}), {})), "evil.Sub"),
    ],
    ids=["unknown-storage-class", "unknown-size", "parameter-of-unknown", "unknown-rebuild", "subclass"],
)  # fmt: skip
def test_an_allowlisted_rebuild_that_needs_an_unknown_object_names_it(tmp_path, obj, needs):
    values, tensors, _ = _open(tmp_path, {"t": obj})
    assert tensors == ["w"]
    assert values["x.t"] == (
        f"tensor not read: its rebuild needs {needs}, which was not executed; left out of cast"
    )


def test_a_parameter_of_an_unread_tensor_stays_unread():
    unread = v2(P(("storage", G("evil", "Storage"), "0", "cpu", 2)), 0, (2,), (1,))
    found = _load(R(G("torch._utils", "_rebuild_parameter"), (unread, True, {})))
    assert isinstance(found, UnreadTensor) and found.needs == "a storage of class evil.Storage"


def test_build_with_a_setstate_or_reduce_in_its_state_is_kept_as_data(tmp_path):
    state = {"__setstate__": G("os", "system"), "__reduce__": G("builtins", "eval"), "a": 1}
    obj = B(N(G("evil", "Obj"), ()), state)
    on_class = B(G("evil", "Cls"), {"__call__": G("os", "system")})  # BUILD on the class itself
    values, _, facts = _open(tmp_path, [obj, on_class])
    assert values["x.0"] == "evil.Obj object, not built (unknown code, not executed)"
    assert values["x.1"] == "evil.Cls (unknown, not imported)"
    found = _load(obj)
    assert isinstance(found, Unknown) and set(found.state) == {"__setstate__", "__reduce__", "a"}
    assert isinstance(found.state["__setstate__"], Unknown)  # a name, never looked up
    assert facts.unknown == ["evil.Obj", "os.system", "builtins.eval", "evil.Cls"]


def test_build_on_an_allowlisted_class_is_still_refused(tmp_path):
    path = tmp_path / "m.pt"
    bad = B(G("collections", "OrderedDict"), {"__reduce__": G("os", "system")})
    path.write_bytes(zip_file(dumps({"w": W, "x": bad}), {"0": W_BYTES}))
    with pytest.raises(RefusedPickleError, match=r"pickle imports os\.system"):
        open_checkpoint(path)


def test_a_placeholder_as_the_persistent_id_is_refused_naming_it(tmp_path):
    path = tmp_path / "m.pt"
    path.write_bytes(zip_file(dumps({"w": W, "x": P(N(G("evil", "Id"), ()))}), {"0": W_BYTES}))
    with pytest.raises(RefusedPickleError, match=r"pickle imports evil\.Id, which is not"):
        open_checkpoint(path)


def test_placeholders_as_dict_keys_and_set_items_hash_by_identity(tmp_path):
    k1, k2 = N(G("evil", "K"), ()), N(G("evil", "K"), ())
    keyed = {k1: 1, k2: {"inner": W}, ("a", k1): 3}
    members = R(G("builtins", "set"), ([k1, k2, k1],))
    values, tensors, _ = _open(tmp_path, {"d": keyed, "s": members})
    assert values["x.d.<evil.K>"] == "1"
    assert tensors == ["w", "x.d.<evil.K>.inner"]  # the second key is another object
    assert values["x.d.('a', evil.K)"] == "3"
    assert values["x.s"] == "a set of 2"


def _walked(obj):
    """The walk's bound is its visit count, not a clock (no timing in tests: a loaded machine or
    mutmut's tracing made a 5 s limit fail); a walk past the bound raises."""
    return flatten(_load(obj))


def test_deep_chains_of_placeholders_are_walked_in_bounded_depth():
    """wrap(wrap(…wrap(w)…)) 5,000 deep, each given a state by BUILD: written without recursion
    (MARK, then the tuples and calls closing from the inside)."""
    levels = 5000
    data = (
        b"\x80\x02}X\x01\x00\x00\x00x"
        + b"cevil\nwrap\n(" * levels
        + dumps(W)[2:-1]
        + b"tR}X\x01\x00\x00\x00aK\x01sb" * levels
        + b"s."
    )
    root = PickleMachine(data, LoadPolicy()).run(0)[0]
    tensors, values = flatten(root)
    assert isinstance(root["x"], Unknown) and root["x"].state == {"a": 1}
    assert tensors == [] and [v.name for v in values] == ["x"]  # w, 5,000 levels down: not reached


def test_shared_placeholders_are_walked_once_each():
    """Each level holds the one below twice: 2**60 paths, 60 placeholders."""
    obj = W
    for _ in range(60):
        obj = R(G("evil", "pair"), (obj, obj))
    tensors, values = _walked({"x": obj})
    # the innermost placeholder holds w twice: a tied tensor, under both names
    assert [n for n, _ in tensors] == ["x" + ".0" * 60, "x" + ".0" * 59 + ".1"]
    assert isinstance(tensors[0][1], TensorRecord) and tensors[0][1] is tensors[1][1]


def test_a_state_shared_by_many_placeholders_is_walked_within_the_visit_bound():
    """3,000 placeholders given the same 20,000-item state: a 180 kB file whose walk took 63 s
    (each placeholder counted the state's items as new) now stops at the bound."""
    state = b"}q\x00(" + b"".join(b"J" + i.to_bytes(4, "little") + b"K\x01" for i in range(20_000))
    data = b"\x80\x02" + state + b"u0]q\x01(" + b"cevil\nO\n)\x81h\x00b" * 3_000 + b"e."
    root = PickleMachine(data, LoadPolicy()).run(0)[0]
    with pytest.raises(PickleError, match="shares the same containers under so many names"):
        flatten(root)


def test_a_huge_argument_list_is_searched_only_so_far():
    late = [*range(200_000), N(G("evil", "late"), ())]
    with pytest.raises(PickleError, match="items that are not pairs"):  # corrupt, as before
        _load(R(G("collections", "OrderedDict"), (late,)))
    early = [N(G("evil", "early"), ()), *range(200_000)]
    found = _load(R(G("collections", "OrderedDict"), (early,)))
    assert isinstance(found, Unknown) and found.qualname == "collections.OrderedDict of evil.early"


def test_memo_bombs_through_placeholder_items_stay_within_the_object_budget():
    # one placeholder gets 2M items, each the same memoized list
    body = b"\x80\x02cevil\nD\n)\x81]q\x00(" + b"K\x01h\x00" * 2_000_000 + b"u."
    with pytest.raises(Exception, match="objects; not a tensor checkpoint"):
        PickleMachine(body, LoadPolicy(), max_objects=1_000_000).run(0)


def test_nothing_runs_when_the_cli_reads_a_file_full_of_placeholders(tmp_path, capsys):
    canary = tmp_path / "CANARY"
    touch = R(G("os", "system"), (f"touch {canary}",))
    obj = {
        touch: B(N(G("evil", "Obj"), (touch,)), {"__setstate__": touch}),
        "p": R(G("posix", "system"), (f"touch {canary}",)),
        "q": B(R(G("builtins", "exec"), (f"open({str(canary)!r}, 'w')",)), touch),
    }
    path = tmp_path / "m.pt"
    path.write_bytes(zip_file(dumps({"w": W, "x": obj}), {"0": W_BYTES}))
    assert main(["list", str(path)]) == 0
    assert main(["scan", str(path)]) == 1
    capsys.readouterr()
    assert main(["lint", str(path), "--json"]) == 1
    codes = [f["code"] for f in json.loads(capsys.readouterr().out)["findings"]]
    assert codes == ["weights_unknown_objects"]
    out = tmp_path / "o.safetensors"
    assert main(["cast", str(path), "--target", "F16", "-o", str(out)]) == 0
    assert not canary.exists()
    from safetensors.numpy import load_file

    assert load_file(out)["w"].tolist() == [1.5, -2.0] and load_file(out)["w"].dtype == np.float16
    assert list(load_file(out)) == ["w"]


def test_a_pickle_of_placeholders_alone_is_refused_as_before(tmp_path):
    path = tmp_path / "m.pt"
    path.write_bytes(zip_file(dumps({"x": B(N(G("evil", "Obj"), ()), {})}), {}))
    with pytest.raises(RefusedPickleError, match=r"pickle imports evil\.Obj"):
        open_checkpoint(path)
    path.write_bytes(zip_file(dumps(R(G("os", "system"), ("true",))), {}))
    with pytest.raises(CheckpointError, match=r"pickle imports os\.system"):
        open_checkpoint(path)


def test_a_legacy_storage_of_an_unknown_class_is_refused_naming_it(tmp_path):
    """The legacy layout gives each storage's element count, not its bytes: after a storage of
    an unknown class nothing can be located (a zip names each storage's bytes: only its tensor
    is lost there, as the parametrized test above shows)."""
    from tests.core.pickle_craft import legacy_file

    odd = v2(P(("storage", G("evil", "Storage"), "1", "cpu", 2)), 0, (2,), (1,))
    pkl = dumps({"w": W, "x": odd})
    path = tmp_path / "m.bin"
    path.write_bytes(legacy_file(pkl, {"0": (2, W_BYTES), "1": (2, W_BYTES)}))
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(path)
    assert e.value.reason == (
        "legacy checkpoint: storage '1' is of class evil.Storage, unknown here: its bytes per "
        "element, and so where the storages after it start, are unknown; nothing was executed "
        "(see: checkpoint-inspector scan)"
    )


def test_a_huge_global_name_is_clipped_in_every_line_that_names_it(tmp_path, capsys):
    from inspector.core.unknown_objects import unknown_notices

    name = "m" * 100_000
    _open(tmp_path, N(G(name, "C"), ()))
    with open_checkpoint(tmp_path / "m.pt") as ckpt:
        [note] = unknown_notices(ckpt)
    assert len(note) < 300 and note.startswith("unknown objects not executed: mmm")
    assert main(["lint", str(tmp_path / "m.pt")]) == 1
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) < 400


@pytest.mark.parametrize(
    ("count", "tail"), [(5, "mod4.C"), (6, "mod4.C and 1 more")], ids=["five", "six"]
)
def test_five_unknown_names_are_all_shown_and_a_sixth_is_counted(tmp_path, count, tail):
    """Five names fit the notice; "and 0 more" after exactly five would be a wrong count."""
    from inspector.core.unknown_objects import unknown_notices

    _open(tmp_path, [N(G(f"mod{i}", "C"), ()) for i in range(count)])
    with open_checkpoint(tmp_path / "m.pt") as ckpt:
        [note] = unknown_notices(ckpt)
    assert note == (
        f"unknown objects not executed: mod0.C, mod1.C, mod2.C, mod3.C, {tail} (kept as inert "
        "placeholders; torch.load(weights_only=True) refuses this file: see "
        "checkpoint-inspector scan)"
    )


def test_a_legacy_refusal_names_the_file_and_clips_a_long_storage_key(tmp_path):
    """The refusal names the file it is about, and a storage key is shown clipped to 80
    characters as in the other legacy storage lines. (Mutation testing: the file left out, or a
    key clipped at 81 or 120 characters, passed.)"""
    from tests.core.pickle_craft import legacy_file

    key = "k" * 100
    odd = v2(P(("storage", G("evil", "Storage"), key, "cpu", 2)), 0, (2,), (1,))
    path = tmp_path / "m.bin"
    path.write_bytes(legacy_file(dumps({"w": W, "x": odd}), {"0": (2, W_BYTES), key: (2, W_BYTES)}))
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(path)
    assert e.value.path == str(path)
    assert e.value.reason.startswith(
        f"legacy checkpoint: storage {'k' * 80!r}… is of class evil.Storage, unknown here"
    )


@pytest.mark.parametrize("where", ["root", "magic"])
def test_a_legacy_pickle_of_code_is_refused_naming_the_file(tmp_path, where):
    """A legacy file whose object (or whose first pickle, where the magic number belongs) calls
    os.system is refused by what it imports, and the refusal names the file. (Mutation testing:
    a refusal naming no file passed.)"""
    import pickle

    from tests.core.pickle_craft import SYS_INFO, legacy_file

    code = dumps(R(G("os", "system"), ("true",)))
    path = tmp_path / "m.bin"
    if where == "root":
        path.write_bytes(legacy_file(code, {}))
    else:
        tail = b"".join(pickle.dumps(v, protocol=2) for v in (1001, SYS_INFO))
        path.write_bytes(code + tail + dumps({}) + pickle.dumps([], protocol=2))
    with pytest.raises(RefusedPickleError) as e:
        open_checkpoint(path)
    assert e.value.path == str(path)
    assert "os.system" in e.value.reason


def test_a_second_kind_of_items_on_a_placeholder_goes_nowhere():
    """APPEND then SETITEM on one unknown object: the appended item is kept as data, the item
    set by key does not land in that list. (Mutation testing: giving the list to SETITEM
    overwrote the kept item.)"""
    raw = b"\x80\x02cevil\nObj\n)\x81K\x01aK\x00K\x03s."
    found = PickleMachine(raw, LoadPolicy()).run(0)[0]
    assert isinstance(found, Unknown) and found.items == [1]


def test_a_legacy_key_list_that_is_not_a_list_is_refused_as_damaged(tmp_path):
    """The storage keys after a legacy object must be a list; any other value is named damaged
    (not iterated: an int would crash the read)."""
    import pickle

    from tests.core.pickle_craft import legacy_file

    path = tmp_path / "m.bin"
    raw = legacy_file(dumps({}), {})
    keys = pickle.dumps([], protocol=2)
    assert raw.endswith(keys)
    path.write_bytes(raw[: -len(keys)] + pickle.dumps(5, protocol=2))
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(path)
    assert (e.value.path, e.value.reason) == (
        str(path),
        "legacy checkpoint: the storage key list is damaged",
    )


def test_a_legacy_object_pickle_torch_refuses_is_refused_naming_the_file(tmp_path):
    """Damage in the object pickle of a legacy file names the file and the reason."""
    from tests.core.pickle_craft import legacy_file

    path = tmp_path / "m.bin"
    path.write_bytes(legacy_file(dumps({"d": R(G("torch", "device"), ("cuda", -1))}), {}))
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(path)
    assert (e.value.path, e.value.reason) == (
        str(path),
        "pickle a device is named with an index that is not a non-negative integer",
    )
