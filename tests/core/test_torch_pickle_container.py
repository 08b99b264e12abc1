"""Container ambiguity: files torch reads otherwise than a by-the-book reader. Each was scanned
clean (exit 0) before; now ``scan`` reports a finding (exit 1) and ``list``/``cast`` refuse it.
Where the builder makes torch 2.13 actually run the payload, a control proves it (a canary that
``torch.load(weights_only=False)`` creates), and our tools never create it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from inspector.cli.dispatch import main
from inspector.core.errors import CheckpointError
from inspector.core.formats.torch_pickle.allowlist import ImportVerdict
from inspector.core.formats.torch_pickle.policies import ImportSeen
from inspector.core.opening import open_checkpoint
from inspector.core.scan.walk import FileScan, ScanStatus, scan_file
from tests.hostile.containers import BUILDERS, safetensors_polyglot_of

# the builders for which torch 2.13 really runs the payload: checked in the test itself
TORCH_RUNS = {
    "v7-tar",
    "safetensors-pickle-polyglot",
    "zip64-locator-two-directories",
    "gzip-tar-twin",
    "tar-storages-hardlink",
}
SAYS = {
    "v7-tar": "tar-format",
    "frame-past-stop": "FRAME",
    "case-folded-twin": "same name to torch's zip reader",
    "mixed-case-data-pkl": "os.system",
    "duplicate-name": "stored twice",
    "nul-in-name": "refused",
    "two-directories": "central directory is not where its end record says",
    "torchscript-allowed-class": "TorchScript",
    "safetensors-pickle-polyglot": "pickle that imports os.system",
    "zip64-locator-two-directories": "zip64 end record is not where its locator says",
    "tar-storages-symlink": "tar-format",
    "tar-long-name-chain": "tar-format",
    "gzip-tar-twin": "tar-format",
    "tar-storages-hardlink": "tar-format",
}

_SYSTEM = [ImportSeen("os.system", ImportVerdict.REFUSED)]
_TAR = "is a tar-format checkpoint (torch < 0.4): torch.load unpickles its members; not read"
_TWIN = "members 'a/data.pkl' and 'a/DATA.PKL' have the same name to torch's zip reader"
# what scan says of each, in full: (format, imports, findings); none has an error
SCANS = {
    "v7-tar": ("torch tar", _SYSTEM, [_TAR]),
    "frame-past-stop": (
        "pickle",
        [],
        [
            "pickle stops 18 bytes before the end of its FRAME: torch.load would read what "
            "follows from another place"
        ],
    ),
    "case-folded-twin": ("torch zip", _SYSTEM, [f"{_TWIN} (it ignores case)"]),
    "mixed-case-data-pkl": ("torch zip", _SYSTEM, []),
    "duplicate-name": ("torch zip", _SYSTEM, ["member 'a/data.pkl' is stored twice"]),
    # zipfile cuts a name at its NUL when it reads: what is left is a second a/data.pkl
    "nul-in-name": (
        "torch zip",
        _SYSTEM,
        [
            "member name 'a/data.pkl\\x00.benign' holds a NUL byte",
            "member 'a/data.pkl' is stored twice",
        ],
    ),
    "two-directories": (
        "torch zip",
        [],
        [
            "its central directory is not where its end record says (bytes prepended, or a "
            "second directory)"
        ],
    ),
    "torchscript-allowed-class": (
        "TorchScript",
        [ImportSeen("collections.OrderedDict", ImportVerdict.CONTAINER)],
        [
            "is a TorchScript archive: torch.load hands it to torch.jit.load, which runs the "
            "code it holds"
        ],
    ),
    "safetensors-pickle-polyglot": (
        "safetensors",
        _SYSTEM,
        [
            "is also a pickle: torch.load of this file (say, named pytorch_model.bin) would "
            "unpickle it and import os.system"
        ],
    ),
    "zip64-locator-two-directories": (
        "torch zip",
        [],
        ["its zip64 end record is not where its locator says (a second directory)"],
    ),
    "tar-storages-symlink": ("torch tar", [], [_TAR]),
    "tar-long-name-chain": ("torch tar", [], [_TAR]),
    "gzip-tar-twin": ("torch tar", _SYSTEM, [_TAR]),  # the plain tar's storages, as torch reads
    "tar-storages-hardlink": ("torch tar", _SYSTEM, [_TAR]),  # the member it links to
}


@pytest.fixture(params=sorted(BUILDERS))
def hostile(request, tmp_path):
    canary = tmp_path / "CANARY"
    path = tmp_path / "pytorch_model.bin"
    path.write_bytes(BUILDERS[request.param](canary))
    return request.param, path, canary


def test_scan_never_calls_it_clean_and_list_and_cast_refuse_it(hostile, capsys, tmp_path):
    name, path, canary = hostile
    scan = scan_file(str(path))
    assert scan.status is ScanStatus.REFUSED, scan
    assert main(["scan", str(path)]) == 1
    capsys.readouterr()
    with pytest.raises(CheckpointError, match=SAYS[name]):
        open_checkpoint(path)
    out = tmp_path / "out.safetensors"
    assert main(["cast", str(path), "--target", "F16", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists() and not canary.exists()


def test_each_scan_says_exactly_what_torch_would_read_and_why(hostile):
    """The status alone would not tell a finding's words, its order, the format named or the
    imports listed from each other: a person reads all of them to know what the file does."""
    name, path, _ = hostile
    fmt, imports, findings = SCANS[name]
    assert scan_file(str(path)) == FileScan(str(path), fmt, imports, None, findings)


def test_a_polyglot_whose_pickle_imports_nothing_before_its_finding_says_so(tmp_path):
    """The tensor bytes of the polyglot are a FRAME its first argument crosses: no import was
    read yet, and the finding says so rather than naming none."""
    path = tmp_path / "model.safetensors"
    path.write_bytes(
        safetensors_polyglot_of(b"\x95" + (2).to_bytes(8, "little") + b"X\x05\0\0\0hello.")
    )
    assert scan_file(str(path)) == FileScan(
        str(path),
        "safetensors",
        findings=[
            "is also a pickle: torch.load of this file (say, named pytorch_model.bin) would "
            "unpickle it and import nothing yet",
            "pickle has an argument that crosses the end of its FRAME",
        ],
    )


def test_a_polyglot_whose_pickle_starts_at_its_first_byte_is_refused(tmp_path):
    """Its length bytes are SHORT_BINBYTES 8: read from byte 1 they are no pickle at all."""
    import pickletools

    from safetensors import safe_open

    data = safetensors_polyglot_of(b"cos\nsystem\n(S'echo'\ntR.", mark=False)
    ops = [(op.name, arg) for op, arg, _ in pickletools.genops(data)]
    assert ops[0] == ("SHORT_BINBYTES", data[2:10]) and ("GLOBAL", "os system") in ops
    with pytest.raises(ValueError):
        list(pickletools.genops(data[1:]))
    path = tmp_path / "model.safetensors"
    path.write_bytes(data)
    with safe_open(str(path), "np") as f:  # a valid safetensors file
        assert list(f.keys()) == ["S"]
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(str(path))
    assert str(e.value) == (
        f"{path}: is both a safetensors file and a pickle that imports os.system; refused: "
        "torch.load of it would run that (see: checkpoint-inspector scan)"
    )
    path.write_bytes(safetensors_polyglot_of(b"cos\nsystem\ncbuiltins\neval\n.", mark=False))
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(str(path))
    assert "a pickle that imports os.system, builtins.eval; refused" in str(e.value)


def test_a_polyglot_finding_names_every_import_of_its_pickle(tmp_path):
    path = tmp_path / "model.safetensors"
    path.write_bytes(safetensors_polyglot_of(b"cos\nsystem\ncbuiltins\neval\n."))
    assert scan_file(str(path)) == FileScan(
        str(path),
        "safetensors",
        [
            ImportSeen("os.system", ImportVerdict.REFUSED),
            ImportSeen("builtins.eval", ImportVerdict.REFUSED),
        ],
        findings=[
            "is also a pickle: torch.load of this file (say, named pytorch_model.bin) would "
            "unpickle it and import os.system, builtins.eval"
        ],
    )


@pytest.mark.parametrize("name", sorted(TORCH_RUNS))
def test_the_payload_is_live_for_torch(tmp_path, name):
    """The control: torch.load(weights_only=False) of the same bytes runs the payload."""
    pytest.importorskip("torch")
    canary = tmp_path / "CANARY"
    path = tmp_path / "pytorch_model.bin"
    path.write_bytes(BUILDERS[name](canary))
    subprocess.run(
        [sys.executable, "-c", f"import torch; torch.load({str(path)!r}, weights_only=False)"],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert canary.exists()


def test_the_polyglot_is_a_valid_safetensors_file(tmp_path):
    from safetensors import safe_open

    path = tmp_path / "model.safetensors"
    path.write_bytes(BUILDERS["safetensors-pickle-polyglot"](tmp_path / "CANARY"))
    with safe_open(str(path), "np") as f:
        assert list(f.keys()) == ["S"]


def test_legitimate_frames_are_read(tmp_path):
    """Protocol 4/5 pickles frame every opcode; frames that end where their opcodes end read."""
    import pickle

    from inspector.core.formats.torch_pickle.machine import PickleMachine
    from inspector.core.formats.torch_pickle.policies import ScanPolicy

    obj = {"a": [1, 2.5, "x" * 70_000], "b": b"y" * 200_000, "c": list(range(20_000))}
    for protocol in (4, 5):
        data = pickle.dumps(obj, protocol=protocol)
        assert data.count(b"\x95") >= 1
        value, end = PickleMachine(data, ScanPolicy()).run(0)
        assert end == len(data) and value["c"][-1] == 19_999


def test_real_torch_saves_still_scan_clean(tmp_path):
    torch = pytest.importorskip("torch")
    for new in (True, False):
        path = tmp_path / f"m{new}.pt"
        torch.save(
            {"w": torch.ones(3), "b": torch.zeros(2)}, path, _use_new_zipfile_serialization=new
        )
        assert scan_file(str(path)).status is ScanStatus.CLEAN
        with open_checkpoint(path) as ckpt:
            assert sorted(t.name for t in ckpt.tensors) == ["b", "w"]


def test_each_zip_problem_names_a_long_member_by_its_first_80_characters():
    """A hostile name is clipped, and marked so, in every problem that names it: one with a NUL,
    two that fold to the same, an encrypted one."""
    import io
    import zipfile

    from inspector.core.formats.torch_pickle.containers import zip_problems
    from tests.hostile.containers import BENIGN, _zip

    long = "a/" + "w" * 100
    raw = _zip(
        [("a/data.pkl", BENIGN), (long + "#x", b""), (long.upper(), b""), (long + "e", b"")]
    ).replace(f"{long}#x".encode(), f"{long}\0x".encode())
    flags = raw.rindex(f"{long}e".encode()) - 46 + 8  # its central entry's flags: bit 0
    raw = raw[:flags] + bytes([raw[flags] | 1]) + raw[flags + 1 :]
    clip, upper = repr(long[:80]) + "…", repr(long.upper()[:80]) + "…"
    with zipfile.ZipFile(fh := io.BytesIO(raw)) as zf:
        assert zip_problems(zf, fh, len(raw)) == [
            f"member name {long[:80]!r}… holds a NUL byte",
            f"members {clip} and {upper} have the same name to torch's zip reader (it ignores "
            "case)",
            f"member {(long + 'e')[:80]!r}… is encrypted",
        ]
