"""Malicious pickles never run: each payload would create a canary file if unpickled. ``scan``
exits 1 naming the import and the canary never appears. A pickle of code alone is refused
(``list`` and ``cast`` exit 2); a checkpoint that carries a payload beside its tensors opens with
the payload as an inert placeholder, named in a note, and a cast writes only the tensors. A
control proves the payloads are live: the real ``pickle.loads`` does create the canary."""

from __future__ import annotations

import io
import os
import pickle
import struct
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from inspector.cli.dispatch import main
from inspector.core.errors import CheckpointError, RefusedPickleError
from inspector.core.formats.torch_pickle.machine import PickleError, PickleMachine
from inspector.core.formats.torch_pickle.names import MAX_DEPTH, flatten
from inspector.core.formats.torch_pickle.policies import LoadPolicy
from inspector.core.opening import open_checkpoint
from inspector.core.scan.walk import ScanStatus, scan_file

torch = pytest.importorskip("torch")
load_file = pytest.importorskip("safetensors.torch").load_file


def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _str(s: str) -> bytes:
    b = s.encode()
    return b"\x8c" + bytes([len(b)]) + b


def _call_system(cmd: str) -> bytes:
    """os.system(cmd) by GLOBAL + REDUCE, protocol 2 framing."""
    return b"\x80\x02" + _global("os", "system") + _str(cmd) + b"\x85R."


class _Reduce:
    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return (self.func, self.args)


@dataclass
class Payload:
    name: str
    file: str
    build: object  # (folder, touch_command, canary_path) -> bytes written to `file`, or None
    names: str  # what scan must name
    opens: bool = False  # a checkpoint beside the payload: its tensor is read, the payload not


def _torch_zip(folder, obj):
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2), "x": obj}, buf)
    return buf.getvalue()


def _torch_legacy(folder, obj):
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2), "x": obj}, buf, _use_new_zipfile_serialization=False)
    return buf.getvalue()


def _swap_data_pkl(good: bytes, new_pkl: bytes) -> bytes:
    """A valid torch zip whose data.pkl was replaced (storages and all other members kept)."""
    src = zipfile.ZipFile(io.BytesIO(good))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = new_pkl if info.filename.endswith("/data.pkl") else src.read(info)
            dst.writestr(info.filename, data)
    return out.getvalue()


def _payloads() -> list[Payload]:
    def sh(cmd):
        return _Reduce(os.system, cmd)

    def py(code):
        return _Reduce(exec, code)

    return [
        Payload(
            "zip_os_system", "m.pt", lambda f, c, p: _torch_zip(f, sh(c)), "posix.system", True
        ),
        Payload(
            "legacy_os_system",
            "m.pt",
            lambda f, c, p: _torch_legacy(f, sh(c)),
            "posix.system",
            True,
        ),
        Payload(
            "raw_bin", "pytorch_model.bin", lambda f, c, p: pickle.dumps(sh(c)), "posix.system"
        ),
        Payload(
            "exec",
            "m.ckpt",
            lambda f, c, p: pickle.dumps(py(f"open({str(p)!r}, 'w')")),
            "builtins.exec",
        ),
        Payload(
            "eval",
            "m.pth",
            lambda f, c, p: pickle.dumps(_Reduce(eval, f"open({str(p)!r}, 'w')")),
            "builtins.eval",
        ),
        Payload(
            "popen",
            "m.bin",
            lambda f, c, p: pickle.dumps(_Reduce(subprocess.Popen, ["touch", str(p)])),
            "subprocess.Popen",
        ),
        Payload(
            "swapped_data_pkl",
            "m.pt",
            lambda f, c, p: _swap_data_pkl(_torch_zip(f, 1), _call_system(c)),
            "os.system",
        ),
        Payload(
            "stack_global_from_memo",  # names stored in the memo, fetched back, then imported
            "m.bin",
            lambda f, c, p: (
                b"\x80\x04"
                + _str("os")
                + b"\x94"
                + _str("system")
                + b"\x94"
                + b"0"
                + b"0"
                + b"h\x00h\x01\x93"
                + _str(c)
                + b"\x85R."
            ),
            "os.system",
        ),
        Payload(
            "inst",
            "m.bin",
            lambda f, c, p: b"(" + _str(c) + b"ios\nsystem\n.",
            "os.system",
        ),
        Payload(
            "obj",
            "m.bin",
            lambda f, c, p: b"\x80\x02(" + _global("os", "system") + _str(c) + b"o.",
            "os.system",
        ),
        Payload(
            "build_on_allowed_class",  # BUILD would set attributes of OrderedDict, then call os
            "m.bin",
            lambda f, c, p: (
                b"\x80\x02"
                + _global("collections", "OrderedDict")
                + b"}"
                + _str("__reduce__")
                + _global("os", "system")
                + b"sb0"
                + _call_system(c)[2:]
            ),
            "os.system",
        ),
    ]


PAYLOADS = _payloads()


@pytest.fixture
def canary(tmp_path):
    return tmp_path / "CANARY"


def _make(tmp_path, payload, canary):
    path = tmp_path / payload.file
    path.write_bytes(payload.build(tmp_path, f"touch {canary}", canary))
    return path


def test_payloads_are_live(tmp_path, canary):
    """The control: the real unpickler runs a payload (so a missing canary below means something)."""
    path = _make(tmp_path, PAYLOADS[2], canary)
    subprocess.run(
        [sys.executable, "-c", f"import pickle; pickle.load(open({str(path)!r}, 'rb'))"],
        check=False,
        timeout=60,
    )
    assert canary.exists()


@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: p.name)
def test_payload_never_runs(tmp_path, canary, capsys, payload):
    path = _make(tmp_path, payload, canary)
    assert main(["scan", str(path)]) == 1
    out = capsys.readouterr().out
    assert payload.names in out and "REFUSED" in out
    out_path = tmp_path / "o.safetensors"
    if payload.opens:
        assert main(["list", str(path)]) == 0
        out, err = capsys.readouterr()
        assert f"unknown objects not executed: {payload.names} (" in err
        assert f"x = {payload.names} object, not built (unknown code, not executed)" in out
        assert main(["cast", str(path), "--target", "F32", "-o", str(out_path)]) == 0
        capsys.readouterr()
        assert list(load_file(out_path)) == ["w"]
        assert load_file(out_path)["w"].tolist() == [1.0, 1.0]
    else:
        assert main(["list", str(path)]) == 2
        err = capsys.readouterr().err
        assert (err.count("\n") == 1 and "nothing was executed" in err) or "BUILD" in err, err
        assert main(["cast", str(path), "--target", "F32", "-o", str(out_path)]) == 2
        capsys.readouterr()
        assert not out_path.exists()
    assert not canary.exists()


def test_refusal_names_every_import(tmp_path):
    path = tmp_path / "two.bin"
    path.write_bytes(pickle.dumps([_Reduce(os.system, "true"), _Reduce(eval, "1")]))
    with pytest.raises(RefusedPickleError) as err:
        open_checkpoint(path)
    assert err.value.imports == ["posix.system", "builtins.eval"]
    assert err.value.reason == (
        "pickle imports posix.system and builtins.eval, which are not part of a tensor "
        "checkpoint; nothing was executed (see: checkpoint-inspector scan)"
    )


def test_extension_codes_and_computed_names_are_refused(tmp_path):
    ext = tmp_path / "ext.bin"
    ext.write_bytes(b"\x80\x02\x82\x07)R.")  # EXT1 code 7, called
    computed = tmp_path / "computed.bin"
    # the module name is an OrderedDict (a call's result), not a string
    computed.write_bytes(
        b"\x80\x04" + _global("collections", "OrderedDict") + b")R" + _str("x") + b"\x93)R."
    )
    for path, said in ((ext, "extension code 7"), (computed, "computed at load time")):
        with pytest.raises(RefusedPickleError, match=said):
            open_checkpoint(path)
        assert scan_file(str(path)).status is ScanStatus.REFUSED


@pytest.mark.parametrize(
    "data, says",
    [
        (b"\x80\x02]" + b"(" * 3000 + b"K\x01" + b"l" * 3000 + b"a.", "1000 levels deep"),
        (b"\x80\x02]\x94h\x00a.", "contains itself"),
        (b"\x80\x02}(" + b"K\x01K\x02" * 50 + b"u.", None),
        (b"\x80\x02]q\x00(" + b"K\x01" * 200 + b"e.", "more than 100 objects"),
        (b"\x80\x02X\xff\xff\xff\x7fabc.", "truncated"),
        (b"\x80\x02K\x01", "without a STOP"),
        (b"\x80\x02\xffK.", "uses an unknown opcode"),
        (b"\x80\x02" + b"\x8b" + struct.pack("<i", 1 << 20) + b"\x00" * 10 + b".", "500,000 bits"),
    ],
)
def test_limits_and_damage_are_refused_with_a_reason(data, says):
    policy = LoadPolicy()
    limit = 100 if says and "objects" in says else 100_000
    try:
        obj, _ = PickleMachine(data, policy, max_objects=limit).run(0)
        flatten(obj)
    except PickleError as e:
        assert says is not None and says in str(e), str(e)
    else:
        assert says is None


def test_renamed_safetensors_pickle_and_damaged_zip(tmp_path):
    bad = tmp_path / "m.pt"
    good = _torch_zip(tmp_path, 1)
    bad.write_bytes(good[: len(good) // 2])
    with pytest.raises(CheckpointError, match="zip"):
        open_checkpoint(bad)
    assert scan_file(str(bad)).status is ScanStatus.UNREADABLE


def test_scan_json_and_safetensors(tmp_path, capsys):
    import json

    import numpy as np
    from safetensors.numpy import save_file

    save_file({"a": np.zeros(2, np.float32)}, str(tmp_path / "a.safetensors"))
    torch.save({"w": torch.ones(2)}, tmp_path / "w.pt")
    assert main(["scan", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "clean"
    by_file = {Path(f["path"]).name: f for f in doc["files"]}
    assert by_file["a.safetensors"]["format"] == "safetensors"
    assert by_file["a.safetensors"]["imports"] == []
    verdicts = {i["name"]: i["verdict"] for i in by_file["w.pt"]["imports"]}
    assert verdicts == {
        "collections.OrderedDict": "container",
        "torch._utils._rebuild_tensor_v2": "tensor",
        "torch.FloatStorage": "tensor",
    }
    (tmp_path / "junk.bin").write_bytes(b"\x80\x02\xff")
    assert main(["scan", str(tmp_path / "junk.bin")]) == 2


@pytest.mark.parametrize("use", [b"K\x01s", b"\x91"], ids=["dict_key", "frozenset"])
def test_deeply_nested_key_is_refused_not_a_crash(tmp_path, use):
    """Hashing a million nested tuples overflows the C stack (segfault); such a key is refused.
    Run in a child process: before the fix this killed the interpreter."""
    nest = b"\x85" * 1_000_000  # TUPLE1 a million times around ()
    if use == b"\x91":
        data = b"\x80\x04(" + b")" + nest + b"\x91."
    else:
        data = b"\x80\x04}" + b")" + nest + use + b"."
    path = tmp_path / "deep.bin"
    path.write_bytes(data)
    proc = subprocess.run(
        [sys.executable, "-m", "inspector", "list", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-500:])
    assert "nested more than 16 levels deep" in proc.stderr


def test_storage_member_past_the_end_is_refused(tmp_path):
    """A zip whose storage member claims more bytes than the file has (a forged size)."""
    good = _torch_zip(tmp_path, 1)
    src = zipfile.ZipFile(io.BytesIO(good))
    key = next(n for n in src.namelist() if "/data/" in n)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
    data = bytearray(out.getvalue())
    # the storage member's sizes in the central directory (its entry starts 46 bytes before
    # its name): claim 1 GiB
    at = data.find(key.encode(), data.find(b"PK\x01\x02")) - 46
    assert data[at : at + 4] == b"PK\x01\x02"
    struct.pack_into("<II", data, at + 20, 1 << 30, 1 << 30)
    path = tmp_path / "forged.pt"
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"past the end|damaged"):
        open_checkpoint(path)


def test_nesting_exactly_at_the_depth_limit_is_read_one_more_is_refused():
    obj: object = 1
    for _ in range(MAX_DEPTH):
        obj = [obj]
    _tensors, values = flatten(obj)
    assert [v.name for v in values] == [".".join(["0"] * MAX_DEPTH)]
    with pytest.raises(PickleError, match=f"more than {MAX_DEPTH} levels deep"):
        flatten([obj])


def _rezipped(good: bytes, change) -> bytes:
    """The torch zip ``good`` with members replaced or added by ``change(name, data)``."""
    src = zipfile.ZipFile(io.BytesIO(good))
    prefix = src.namelist()[0].split("/")[0] + "/"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, change(info.filename, src.read(info)))
        for name, data in change(prefix, None) or ():
            dst.writestr(name, data)
    return out.getvalue()


@pytest.mark.parametrize("extra", ["constants.pkl", "code/__torch__/model.py"])
def test_either_sign_of_torchscript_is_named(tmp_path, extra):
    good = _torch_zip(tmp_path, 1)

    def add(name, data):
        if data is None:  # the members to add
            return [(name + extra, b"x")]
        return data

    path = tmp_path / "scripted.pt"
    path.write_bytes(_rezipped(good, add))
    with pytest.raises(CheckpointError, match="TorchScript archive") as e:
        open_checkpoint(path)
    assert e.value.path == str(path)


@pytest.mark.parametrize(
    ("order", "refused"), [(b"big", "big-endian"), (b"little", None), (b"", "torch refuses it")]
)
def test_a_big_endian_byteorder_is_refused(tmp_path, order, refused):
    good = _torch_zip(tmp_path, 1)

    def swap(name, data):
        if data is None:
            return []
        return order if name.endswith("/byteorder") else data

    path = tmp_path / "m.pt"
    path.write_bytes(_rezipped(good, swap))
    if refused:
        with pytest.raises(CheckpointError, match=refused) as e:
            open_checkpoint(path)
        assert e.value.path == str(path)
    else:
        with open_checkpoint(path) as ckpt:
            assert [t.name for t in ckpt.tensors] == ["w"]


def test_a_damaged_zip_names_its_file(tmp_path):
    path = tmp_path / "m.pt"
    path.write_bytes(_torch_zip(tmp_path, 1)[:-30])  # the end of the central directory cut
    with pytest.raises(CheckpointError, match="damaged zip archive") as e:
        open_checkpoint(path)
    assert e.value.path == str(path)
