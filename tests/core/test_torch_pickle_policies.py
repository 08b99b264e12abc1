"""The two policies' answers, question by question: which persistent ids name a storage (and the
reason each other kind is refused), what a call or BUILD may reach, what a scan returns."""

from __future__ import annotations

import pytest

from inspector.core.formats.torch_pickle.allowlist import ALLOWED, ImportVerdict, StorageRef
from inspector.core.formats.torch_pickle.machine import Opaque, PickleError, PickleMachine
from inspector.core.formats.torch_pickle.policies import ImportSeen, LoadPolicy, ScanPolicy
from inspector.core.formats.torch_pickle.unknown import Unknown

FLOAT = ALLOWED["torch.FloatStorage"]
HALF = ALLOWED["torch.HalfStorage"]
UNTYPED = ALLOWED["torch.UntypedStorage"]

NOT_A_STORAGE = "refers to an outside object that is not a torch storage"
ODD_FORM = "names a storage in a form torch does not write"


@pytest.mark.parametrize(
    "pid, says",
    [
        ("storage", NOT_A_STORAGE),
        (("storage", FLOAT, "0", "cpu"), NOT_A_STORAGE),
        (("storage", FLOAT, "0", "cpu", 1, None, None), NOT_A_STORAGE),
        (("module", FLOAT, "0", "cpu", 1), NOT_A_STORAGE),
        (("storage", "FloatStorage", "0", "cpu", 1), ODD_FORM),
        (("storage", FLOAT, 0, "cpu", 1), ODD_FORM),
        (("storage", FLOAT, "0", "cpu", 1.0), ODD_FORM),
        (("storage", FLOAT, "0", "cpu", True), ODD_FORM),
        (("storage", FLOAT, "0", "cpu", -1), "names a storage of negative size"),
        (
            ("storage", FLOAT, "0", "cpu", 4, ("view", 0, 2)),
            "uses a storage view (torch < 1.0 layout), which this tool cannot read",
        ),
        (
            ("storage", ALLOWED["torch.QInt8Storage"], "0", "cpu", 4),
            "holds a torch.QInt8Storage, which safetensors cannot store",
        ),
    ],
)
def test_persistent_ids_other_than_a_storage_are_refused_with_the_reason(pid, says):
    with pytest.raises(PickleError) as e:
        LoadPolicy().persistent_load(pid)
    assert str(e.value) == says


def test_a_storage_id_gives_its_key_dtype_size_and_item_size():
    policy = LoadPolicy()
    ref = policy.persistent_load(("storage", FLOAT, "0", "cpu", 6))
    assert isinstance(ref, StorageRef) and (ref.key, ref.dtype.name, ref.numel) == ("0", "F32", 6)
    ref = policy.persistent_load(("storage", HALF, "1", "cuda:0", 0, None))  # six fields, no view
    assert (ref.key, ref.dtype.name, ref.numel) == ("1", "F16", 0)
    ref = policy.persistent_load(("storage", UNTYPED, "2", "cpu", 10))
    assert (ref.key, ref.dtype, ref.numel) == ("2", None, 10)
    policy.persistent_load(("storage", HALF, "0", "cpu", 6))  # a key keeps its first item size
    assert policy.item_size == {"0": 4, "1": 2, "2": 1}


def test_only_stand_ins_are_called_with_tuples():
    policy = LoadPolicy()
    with pytest.raises(PickleError) as e:
        policy.call(5, ())
    assert str(e.value) == "calls a int, which is not callable here"
    with pytest.raises(PickleError) as e:
        policy.call(ALLOWED["collections.OrderedDict"], [])
    assert str(e.value) == "calls with arguments that are not a tuple (corrupt)"
    assert policy.call(ALLOWED["collections.OrderedDict"], ([("a", 1)],)) == {"a": 1}


def test_build_keeps_dicts_and_tensors_and_refuses_the_rest():
    policy = LoadPolicy()
    d = {"a": 1}
    assert policy.build(d, {"_metadata": {}}) is d and d == {"a": 1}
    with pytest.raises(PickleError) as e:
        policy.build(ALLOWED["collections.OrderedDict"], {"x": 1})
    assert str(e.value) == (
        "sets attributes of collections.OrderedDict (BUILD on a class), which torch never does"
    )
    with pytest.raises(PickleError) as e:
        policy.build([1], {})
    assert str(e.value) == "sets state on a list, which torch never does"


def test_an_unknown_import_is_a_placeholder_naming_itself_and_is_noted_refused():
    policy = LoadPolicy()
    found = policy.resolve_global("os", "system")
    assert isinstance(found, Unknown) and found.qualname == "os.system" and not found.called
    assert policy.seen == {"os.system": ImportSeen("os.system", ImportVerdict.REFUSED)}
    assert policy.unknown == ["os.system"]
    policy.resolve_global("torch", "FloatStorage")
    assert policy.seen["torch.FloatStorage"] == ImportSeen(
        "torch.FloatStorage", ImportVerdict.TENSOR
    )
    assert policy.unknown == ["os.system"]


def test_a_scan_builds_plain_values_and_nothing_else():
    scan = ScanPolicy()
    assert scan.call(ALLOWED["collections.OrderedDict"], ([("a", 1)],)) == {"a": 1}
    assert isinstance(scan.call(ALLOWED["collections.OrderedDict"], ([1],)), Opaque)  # bad args
    assert isinstance(scan.call(ALLOWED["torch._utils._rebuild_tensor_v2"], ()), Opaque)
    assert isinstance(scan.persistent_load(("storage", FLOAT, "0", "cpu", 1)), Opaque)
    assert isinstance(scan.resolve_global("os", "system"), Opaque)
    assert scan.resolve_global("torch", "FloatStorage") is FLOAT
    cls = ALLOWED["collections.OrderedDict"]
    assert scan.build(cls, {"x": 1}) is cls
    assert scan.seen["BUILD on collections.OrderedDict (sets attributes of a class)"] == ImportSeen(
        "BUILD on collections.OrderedDict (sets attributes of a class)", ImportVerdict.REFUSED
    )


def test_a_scan_reads_on_past_a_refused_import_into_what_it_builds():
    data = (
        b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00lsR(K\x01K\x02e."  # os.system("ls"), then APPENDS
    )
    obj, _ = PickleMachine(data, ScanPolicy()).run(0)
    assert isinstance(obj, Opaque)  # the items went nowhere, and the read went on
