"""``scan`` file by file: which files of a folder it reads, the format it names, every import it
counts, and where it stops reading (a legacy file's storage bytes are not pickles)."""

from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pytest
from safetensors.numpy import save_file

from inspector.core.errors import CheckpointError
from inspector.core.formats.torch_pickle.allowlist import ImportVerdict
from inspector.core.formats.torch_pickle.machine import PickleMachine
from inspector.core.formats.torch_pickle.policies import ImportSeen, LoadPolicy, ScanPolicy
from inspector.core.formats.torch_pickle.reader import PickleFormat, read_pickle_checkpoint
from inspector.core.scan.walk import FileScan, ScanStatus, scan_file, scan_path

torch = pytest.importorskip("torch")

T, C, R = ImportVerdict.TENSOR, ImportVerdict.CONTAINER, ImportVerdict.REFUSED
STATE_IMPORTS = [
    ImportSeen("collections.OrderedDict", C),
    ImportSeen("torch._utils._rebuild_tensor_v2", T),
    ImportSeen("torch.FloatStorage", T),
]


def _state() -> dict:
    from collections import OrderedDict

    return OrderedDict(w=torch.ones(2), v=torch.zeros(3))


def test_a_folder_scans_every_file_whatever_its_name_in_name_order(tmp_path):
    for suffix in ("bin", "pt"):
        torch.save(_state(), tmp_path / f"m.{suffix}")
    save_file({"a": np.zeros(2, np.float32)}, str(tmp_path / "a.safetensors"))
    torch.save(_state(), tmp_path / ".hidden.pt")  # hidden: torch loads it all the same
    torch.save(_state(), tmp_path / "m.PT")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "sub.pt").mkdir()  # a folder, whatever its name: walked
    torch.save(_state(), tmp_path / "sub.pt" / "inner.bin")
    report = scan_path(tmp_path)
    names = [os.path.relpath(f.path, tmp_path) for f in report.files]
    assert names == [
        ".hidden.pt",
        "a.safetensors",
        "m.PT",
        "m.bin",
        "m.pt",
        "notes.txt",
        "sub.pt/inner.bin",
    ]
    assert report.root == str(tmp_path)
    assert report.files[1] == FileScan(str(tmp_path / "a.safetensors"), "safetensors")
    assert report.files[5] == FileScan(str(tmp_path / "notes.txt"), "not a checkpoint")
    for i in (0, 2, 3, 4, 6):
        f = report.files[i]
        assert (f.format, f.imports, f.error) == ("torch zip", STATE_IMPORTS, None)
    assert report.status is ScanStatus.CLEAN
    # an index file stands for its folder, wherever the index points
    (tmp_path / "model.safetensors.index.json").write_text("{}")
    by_index = scan_path(tmp_path / "model.safetensors.index.json")
    assert [f.path for f in by_index.files if f.format != "not a checkpoint"] == [
        f.path for f in report.files if f.format != "not a checkpoint"
    ]


_SYSTEM_P0 = b"cos\nsystem\n(S'true'\ntR."  # protocol 0: no \x80 header to tell it by


@pytest.mark.parametrize(
    "name",
    [
        "checkpoint.pth.tar",
        "model.pickle",
        "MODEL.PT",
        "weights.pt.1",
        ".hidden.pt",
        "unet/diffusion_pytorch_model.bin",
        "a/b/c/no_suffix",
    ],
)
def test_a_folder_scan_skips_no_file_torch_would_load(tmp_path, name):
    """Each was skipped (scan said clean) while torch.load(path) runs os.system."""
    save_file({"a": np.zeros(2, np.float32)}, str(tmp_path / "model.safetensors"))
    evil = tmp_path / name
    evil.parent.mkdir(parents=True, exist_ok=True)
    evil.write_bytes(_SYSTEM_P0)
    report = scan_path(tmp_path)
    assert report.status is ScanStatus.REFUSED
    (found,) = [f for f in report.files if f.path == str(evil)]
    assert [i.name for i in found.imports] == ["os.system"]


def test_symlinks_in_a_folder_are_read_through_or_reported(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.bin").write_bytes(_SYSTEM_P0)
    root = tmp_path / "model"
    root.mkdir()
    save_file({"a": np.zeros(2, np.float32)}, str(root / "model.safetensors"))
    (root / "inner").mkdir()
    (root / "again").symlink_to(root / "inner")  # inside: scanned where it is
    (root / "gone.bin").symlink_to(root / "missing")
    report = scan_path(root)
    assert report.status is ScanStatus.CLEAN
    (root / "blob.bin").symlink_to(outside / "evil.bin")  # a hub cache is made of such links
    assert scan_path(root).status is ScanStatus.REFUSED
    (root / "blob.bin").unlink()
    (root / "elsewhere").symlink_to(outside)  # a folder outside: reported, not followed
    report = scan_path(root)
    (linked,) = [f for f in report.files if f.path.endswith("elsewhere")]
    assert "not followed" in linked.error and report.status is ScanStatus.UNREADABLE


def test_a_folder_without_checkpoints_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(CheckpointError, match="holds no checkpoint file to scan"):
        scan_path(tmp_path)
    with pytest.raises(CheckpointError, match="no such file"):
        scan_path(tmp_path / "missing.pt")


def test_a_legacy_file_is_named_and_read_up_to_its_storages(tmp_path):
    path = tmp_path / "old.pt"
    torch.save(_state(), path, _use_new_zipfile_serialization=False)
    scan = scan_file(str(path))
    assert (scan.format, scan.error) == ("torch legacy", None)
    assert scan.imports == STATE_IMPORTS
    assert read_pickle_checkpoint(str(path)).facts.format is PickleFormat.LEGACY
    assert read_pickle_checkpoint(str(tmp_path / "old.pt")).facts.imports == STATE_IMPORTS


def test_a_zip_checkpoint_names_its_format_and_imports(tmp_path):
    path = tmp_path / "new.pt"
    torch.save(_state(), path)
    facts = read_pickle_checkpoint(str(path)).facts
    assert facts.format is PickleFormat.ZIP and facts.imports == STATE_IMPORTS


def test_raw_pickles_one_after_another_are_all_scanned(tmp_path):
    one = b"\x80\x02cos\nsystem\n."
    path = tmp_path / "two.pkl"
    path.write_bytes(one + one + b"not a pickle")  # the scan stops where pickles stop
    scan = scan_file(str(path))
    assert scan == FileScan(str(path), "pickle", [ImportSeen("os.system", R, 2)], None)
    assert scan.status is ScanStatus.REFUSED


def test_an_old_protocol_pickle_is_known_whatever_its_name(tmp_path):
    """torch.load unpickles any file that is not a zip or tar: the name says nothing."""
    data = pickle.dumps({"epoch": 3}, protocol=0)
    for name in ("p0.pkl", "p0.data"):
        (tmp_path / name).write_bytes(data)
        scan = scan_file(str(tmp_path / name))
        assert (scan.format, scan.error) == ("pickle", None)


def test_the_magic_number_makes_a_legacy_file_only_as_an_integer(tmp_path):
    from inspector.core.formats.torch_pickle.archive import LEGACY_MAGIC

    path = tmp_path / "f.pkl"
    path.write_bytes(pickle.dumps(float(LEGACY_MAGIC), 2) + pickle.dumps(1, 2))
    assert scan_file(str(path)).format == "pickle"


def test_a_damaged_pickle_in_a_stream_is_reported(tmp_path):
    path = tmp_path / "bad.pkl"
    path.write_bytes(b"\x80\x02cos\nsystem\n\xff.")
    scan = scan_file(str(path))
    assert scan.format == "pickle"
    assert scan.error == "pickle uses an unknown opcode 0xff at byte 13"
    assert scan.imports == [ImportSeen("os.system", R)]
    assert scan.status is ScanStatus.REFUSED  # what it imports counts more than the damage


def test_a_damaged_zip_is_a_torch_zip_that_cannot_be_read(tmp_path):
    path = tmp_path / "cut.pt"
    torch.save(_state(), path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    scan = scan_file(str(path))
    assert scan.format == "torch zip" and scan.imports == []
    assert scan.error and "zip" in scan.error
    assert scan.status is ScanStatus.UNREADABLE


def test_every_import_is_counted_each_time_it_is_imported():
    data = b"(cos\nsystem\ncos\nsystem\ncos\nsystem\nccollections\nOrderedDict\nt."
    scan = ScanPolicy()
    PickleMachine(data, scan).run(0)
    assert list(scan.seen.values()) == [
        ImportSeen("os.system", R, 3),
        ImportSeen("collections.OrderedDict", C, 1),
    ]
    load = LoadPolicy()
    PickleMachine(b"(ccollections\nOrderedDict\nccollections\nOrderedDict\nt.", load).run(0)
    assert list(load.seen.values()) == [ImportSeen("collections.OrderedDict", C, 2)]


@pytest.mark.parametrize(
    "name, head, is_pickle",
    [
        ("x.safetensors", b"PK\x03\x04rest", True),  # a zip, whatever the name
        ("x.data", b"\x80\x02}q\x00.", True),
        ("x.data", b"\x80\x03}q\x00.", True),
        ("x.data", b"\x80\x04\x95", True),
        ("x.data", b"\x80\x05\x95", True),
        ("x.data", b"\x80\x06\x95", False),  # no such protocol
        ("x.data", b"\x80\x01", False),
        ("x.data", b"(dp0\n", False),  # protocol 0 has no header: only a known suffix says so
        ("x.PT", b"(dp0\n", True),
        ("x.pickle", b"ccollections\n", True),
        ("x.bin", b"]q\x00", True),
        ("x.pth", b"}q\x00", True),
        ("x.ckpt", b'{"a": 1}', False),  # JSON, not a pickle
        ("x.bin", b"", False),
    ],
)
def test_what_looks_like_a_pickle(name, head, is_pickle):
    from inspector.core.formats.torch_pickle.reader import looks_like_pickle

    assert looks_like_pickle(name, head) is is_pickle


def test_every_scan_result_and_refusal_names_its_file(tmp_path):
    import zipfile

    with pytest.raises(CheckpointError) as e:
        scan_path(tmp_path / "missing.pt")
    assert e.value.path == str(tmp_path / "missing.pt")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError) as e:
        scan_path(tmp_path / "empty")
    assert (e.value.path, e.value.reason) == (
        str(tmp_path / "empty"),
        "holds no checkpoint file to scan",
    )
    folder_scan = scan_file(str(tmp_path / "empty"))  # not a regular file
    assert (folder_scan.path, folder_scan.format) == (str(tmp_path / "empty"), "unknown")
    # TorchScript: refused by the reader, still scanned member by member
    ts = tmp_path / "model.pt"
    with zipfile.ZipFile(ts, "w") as zf:
        zf.writestr("m/code/__torch__.py", "x")
        zf.writestr("m/data.pkl", b"\x80\x02cos\nsystem\n.")
        zf.writestr("m/constants.pkl", b"\x80\x02).")
    scan = scan_file(str(ts))
    assert (scan.path, scan.format, scan.error) == (str(ts), "TorchScript", None)
    assert scan.imports == [ImportSeen("os.system", R)]
    # a torch zip whose pickle is damaged: the imports before the damage, and the damage
    bad = tmp_path / "bad.pt"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("m/data.pkl", b"\x80\x02cos\nsystem\n\xff")
    scan = scan_file(str(bad))
    assert (scan.path, scan.format) == (str(bad), "torch zip")
    assert scan.error == "m/data.pkl: pickle uses an unknown opcode 0xff at byte 13"


def test_a_refused_or_damaged_file_still_names_itself_in_the_scan(tmp_path):
    import os as _os

    from inspector.core.scan.walk import scan_file

    fifo = tmp_path / "pipe.pt"
    _os.mkfifo(fifo)
    damaged = tmp_path / "damaged.pt"
    damaged.write_bytes(b"PK\x03\x04 not a zip at all")
    text = tmp_path / "notes.bin"
    text.write_bytes(b"hello, not a checkpoint")
    for path, fmt in ((fifo, "unknown"), (damaged, "torch zip"), (text, "unknown")):
        result = scan_file(str(path))
        assert (result.path, result.format, bool(result.error)) == (str(path), fmt, True)


@pytest.mark.parametrize(
    ("index_name", "shard"),
    [
        ("pytorch_model.bin.index.json", "../outside/evil.bin"),
        ("pytorch_model.bin.index.json", "{outside}/evil.bin"),  # absolute
        ("model.safetensors.index.json", "sub/../../outside/evil.bin"),
        ("pytorch_model.bin.index.json", "via/evil.bin"),  # via: a symlink to the folder outside
        ("diffusion_pytorch_model.bin.index.json", "ok.bin"),  # the index itself links outside
    ],
)
def test_an_index_naming_a_file_outside_the_folder_is_a_finding(tmp_path, index_name, shard):
    """transformers joins every weight_map entry to the index's folder and loads what is there:
    a folder is clean only if everything its index names was scanned."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.bin").write_bytes(_SYSTEM_P0)
    root = tmp_path / "model"
    root.mkdir()
    save_file({"a": np.zeros(2, np.float32)}, str(root / "ok.bin"))
    shard = shard.format(outside=outside)
    index = json.dumps({"weight_map": {"a": "ok.bin", "b": shard}})
    if shard == "via/evil.bin":
        (root / "via").symlink_to(outside, target_is_directory=True)
    if shard == "ok.bin":  # the linked index names a shard outside relative to its own folder
        (outside / "index.json").write_text(
            json.dumps({"weight_map": {"a": "../outside/evil.bin"}})
        )
        (root / index_name).symlink_to(outside / "index.json")
    else:
        (root / index_name).write_text(index)
    report = scan_path(root)
    assert report.status is ScanStatus.REFUSED
    (found,) = [f for f in report.files if f.path.endswith(index_name)]
    assert found.format == "index"
    assert "evil.bin" in found.findings[0] and "outside the scanned folder" in found.findings[0]
    assert scan_path(root / index_name).status is ScanStatus.REFUSED  # the index named directly


def test_an_index_naming_only_files_inside_the_folder_is_no_finding(tmp_path):
    root = tmp_path / "model"
    (root / "sub").mkdir(parents=True)
    save_file({"a": np.zeros(2, np.float32)}, str(root / "sub" / "a.safetensors"))
    (root / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {"a": "sub/a.safetensors", "b": "sub/../sub/a.safetensors"}})
    )
    (root / "config.json").write_text(json.dumps({"weight_map": 3}))
    report = scan_path(root)
    assert report.status is ScanStatus.CLEAN
    assert [f.format for f in report.files] == [
        "not a checkpoint",
        "not a checkpoint",
        "safetensors",
    ]


# CPython's unpickler reads these prefixes on (INT in hex or cut by a NUL, APPEND to a
# bytearray, a memo flood past our budget), ours stops: then comes os.system
DIVERGING = {
    "int-hex": b"I0x10\n0",
    "int-nul": b"I5\x00zz\n0",
    "append-bytearray": b"\x96" + (1).to_bytes(8, "little") + b"aK\x05a0",
    "memo-flood": b"N" + b"\x94" * 900_000 + b"0",
}


@pytest.mark.parametrize("prefix", DIVERGING.values(), ids=DIVERGING.keys())
def test_a_checkpoint_named_pickle_we_cannot_follow_is_never_clean_in_a_folder(tmp_path, prefix):
    """Found by an independent review: such a pytorch_model.bin beside a good safetensors file
    was "not a checkpoint" and the folder clean, while torch.load of it runs os.system."""
    root = tmp_path / "model"
    root.mkdir()
    save_file({"a": np.zeros(2, np.float32)}, str(root / "model.safetensors"))
    (root / "pytorch_model.bin").write_bytes(prefix + _SYSTEM_P0)
    (root / "README.md").write_text("In this folder: weights\n")  # starts like an INT opcode
    report = scan_path(root)
    assert report.status is not ScanStatus.CLEAN
    (found,) = [f for f in report.files if f.path.endswith("pytorch_model.bin")]
    assert "could not be followed to its end" in found.error
    (readme,) = [f for f in report.files if f.path.endswith("README.md")]
    assert readme.format == "not a checkpoint" and readme.status is ScanStatus.CLEAN


def test_a_safetensors_file_named_like_a_pickle_is_judged_as_torch_load_would(tmp_path):
    path = tmp_path / "pytorch_model.bin"
    save_file({"a": np.zeros(2, np.float32)}, str(path))  # its first byte is no opcode
    assert scan_file(str(path)).status is ScanStatus.CLEAN
    body = bytearray(path.read_bytes())
    body[0] = ord("I")  # a header length whose first byte is INT: a pickle we cannot follow
    path.write_bytes(bytes(body))
    assert scan_file(str(path), in_folder=True).status is not ScanStatus.CLEAN
