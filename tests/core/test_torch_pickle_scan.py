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
    assert report.files[:2] == [
        FileScan(str(root / "again"), "symlink to a folder"),
        FileScan(str(root / "gone.bin"), "broken symlink"),
    ]
    (root / "blob.bin").symlink_to(outside / "evil.bin")  # a hub cache is made of such links
    assert scan_path(root).status is ScanStatus.REFUSED
    (root / "blob.bin").unlink()
    (root / "elsewhere").symlink_to(outside)  # a folder outside: reported, not followed
    report = scan_path(root)
    (linked,) = [f for f in report.files if f.path.endswith("elsewhere")]
    assert linked == FileScan(
        str(root / "elsewhere"),
        "symlink to a folder",
        error=f"links to {outside}, outside the scanned folder: not followed; scan it too",
    )
    assert report.status is ScanStatus.UNREADABLE


def test_a_folder_of_links_that_lead_nowhere_holds_no_checkpoint(tmp_path):
    """A broken link or a link to a folder inside is listed, but is no file to scan: a folder
    of only these is refused like an empty one, not called clean."""
    (tmp_path / "inner").mkdir()
    (tmp_path / "again").symlink_to(tmp_path / "inner")
    (tmp_path / "gone.bin").symlink_to(tmp_path / "missing")
    with pytest.raises(CheckpointError, match="holds no checkpoint file to scan"):
        scan_path(tmp_path)


def test_the_walk_reads_the_folder_given_not_the_working_directory(tmp_path, monkeypatch):
    """Each folder the walk lists is the one it found, however deep, wherever the process is."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    root = tmp_path / "model"
    (root / "unet").mkdir(parents=True)
    (root / "unet" / "diffusion_pytorch_model.bin").write_bytes(_SYSTEM_P0)
    save_file({"a": np.zeros(2, np.float32)}, str(root / "model.safetensors"))
    report = scan_path(root)
    assert [(f.path, f.format) for f in report.files] == [
        (str(root / "model.safetensors"), "safetensors"),
        (str(root / "unet" / "diffusion_pytorch_model.bin"), "pickle"),
    ]
    assert report.status is ScanStatus.REFUSED


def test_a_folder_over_the_file_limit_is_scanned_up_to_it_and_says_so(tmp_path, monkeypatch):
    """The limit (100,000 files) stops a walk of a huge tree; shrunk to 2 here. Exactly 2 files
    are scanned, and the error for the rest is what makes the folder not clean."""
    from inspector.core.scan import walk

    monkeypatch.setattr(walk, "MAX_FOLDER_FILES", 2)
    for name in ("a.safetensors", "b.safetensors", "c.safetensors"):
        save_file({"a": np.zeros(2, np.float32)}, str(tmp_path / name))
    report = scan_path(tmp_path)
    assert report.files == [
        FileScan(str(tmp_path / "a.safetensors"), "safetensors"),
        FileScan(str(tmp_path / "b.safetensors"), "safetensors"),
        FileScan(str(tmp_path), "folder", error="holds over 2 files; the rest was not scanned"),
    ]
    assert report.status is ScanStatus.UNREADABLE
    (tmp_path / "c.safetensors").unlink()  # exactly at the limit: all scanned
    assert [f.format for f in scan_path(tmp_path).files] == ["safetensors", "safetensors"]


def test_a_file_holding_an_index_but_not_named_json_is_not_read_as_one(tmp_path):
    """Loaders find an index by its .json name only: the same text under another name sends no
    loader anywhere, so it is no finding (and no reason to call the folder unsafe)."""
    save_file({"a": np.zeros(2, np.float32)}, str(tmp_path / "model.safetensors"))
    (tmp_path / "index.txt").write_text(json.dumps({"weight_map": {"a": "../evil.bin"}}))
    report = scan_path(tmp_path)
    assert report.files == [
        FileScan(str(tmp_path / "index.txt"), "not a checkpoint"),
        FileScan(str(tmp_path / "model.safetensors"), "safetensors"),
    ]
    assert report.status is ScanStatus.CLEAN


def test_an_empty_checkpoint_in_a_folder_is_reported_not_skipped(tmp_path):
    """An empty pytorch_model.bin is no checkpoint torch.load can read: the folder is not clean,
    and the file says why (a non-empty file of no format is "not a checkpoint" instead)."""
    save_file({"a": np.zeros(2, np.float32)}, str(tmp_path / "model.safetensors"))
    (tmp_path / "pytorch_model.bin").write_bytes(b"")
    report = scan_path(tmp_path)
    assert report.files[1] == FileScan(
        str(tmp_path / "pytorch_model.bin"),
        "unknown",
        error="file is too short to be safetensors (0 bytes; needs at least 8 for the header "
        "length)",
    )
    assert report.status is ScanStatus.UNREADABLE


def test_imports_before_the_damage_in_a_pickle_of_no_known_name_are_reported(tmp_path):
    """A protocol-0 pickle under a name no rule knows (x.data): torch.load runs its os.system
    before it reaches the bad byte, so the scan refuses it, not only "cannot read"."""
    path = tmp_path / "x.data"
    path.write_bytes(_SYSTEM_P0[:-1] + b"\xff")
    assert scan_file(str(path)) == FileScan(
        str(path),
        "pickle",
        [ImportSeen("os.system", R)],
        error="pickle uses an unknown opcode 0xff at byte 22",
    )


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
    # the name, whole when short; a long one is clipped at 80 characters (an absolute path under
    # a deep temporary folder, pytest-10706/…, lost "evil.bin" to the clip), its start is there
    named = shard if shard != "ok.bin" else "../outside/evil.bin"
    assert f"names '{named[:60]}" in found.findings[0]
    assert "outside the scanned folder" in found.findings[0]
    assert scan_path(root / index_name).status is ScanStatus.REFUSED  # the index named directly


def test_an_index_naming_only_files_inside_the_folder_is_no_finding(tmp_path):
    root = tmp_path / "model"
    (root / "sub").mkdir(parents=True)
    save_file({"a": np.zeros(2, np.float32)}, str(root / "sub" / "a.safetensors"))
    (root / "model.safetensors.index.json").write_text(
        json.dumps(
            {
                "weight_map": {
                    "a": "sub/a.safetensors",
                    "b": "sub/../sub/a.safetensors",
                    "c": 7,  # no name: no loader opens it (and no crash joining it to a path)
                    "d": ["../x.bin"],
                    "e": "",
                }
            }
        )
    )
    (root / "config.json").write_text(json.dumps({"weight_map": 3}))
    report = scan_path(root)
    assert report.status is ScanStatus.CLEAN
    assert [f.format for f in report.files] == [
        "not a checkpoint",
        "not a checkpoint",
        "safetensors",
    ]


def test_an_index_finding_names_the_first_file_outside_and_counts_the_others(tmp_path):
    """The finding names one shard as written and where it resolves, each clipped to 80
    characters so one finding stays one line, and how many more there are."""
    real = os.path.realpath(tmp_path)
    assert 5 <= len(real) <= 70  # pytest's tmp_path: the paths below are clipped or not by it
    root = tmp_path / "model"
    root.mkdir()
    save_file({"a": np.zeros(2, np.float32)}, str(root / "ok.bin"))
    index = root / "model.safetensors.index.json"
    tail = ", outside the scanned folder: a loader would read it from there; not scanned"

    def finding(weight_map: dict) -> list[str]:
        index.write_text(json.dumps({"weight_map": weight_map}))
        (found,) = [f for f in scan_path(root).files if f.path == str(index)]
        return found.findings

    long = "t" * (80 - len(real))  # resolves to a path of 81 characters: clipped to 77 + "..."
    assert finding({"a": f"../{long}", "b": "../u.bin", "c": "ok.bin"}) == [
        f"its weight_map names '../{long}' ({(real + '/' + long)[:77]}...) and 1 more{tail}"
    ]
    assert finding({"a": "../u.bin", "b": "../v.bin", "c": "../w.bin"}) == [
        f"its weight_map names '../u.bin' ({real}/u.bin) and 2 more{tail}"
    ]
    # 81 characters whose quote is past the clip: quoted as the clipped name is, with '...'
    quoted = "../" + "x" * 74 + "'a.b"
    assert finding({"a": quoted}) == [
        f"its weight_map names '../{'x' * 73}... ({(real + '/' + quoted[3:])[:77]}...){tail}"
    ]


# CPython's unpickler reads these prefixes on (APPEND to a bytearray, a memo flood past our
# budget), ours stops: then comes os.system
DIVERGING = {
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
    assert found.format == "unknown"
    assert found.error.startswith(
        "named like a checkpoint torch.load reads, and its pickle could not be followed to its "
        "end (pickle "
    )
    assert found.error.endswith("); not judged")
    (readme,) = [f for f in report.files if f.path.endswith("README.md")]
    assert readme.format == "not a checkpoint" and readme.status is ScanStatus.CLEAN


@pytest.mark.parametrize("prefix", [b"I0x10\n0", b"I5\x00zz\n0"], ids=["int-hex", "int-nul"])
def test_a_protocol_0_integer_as_cpython_reads_it_is_followed_to_what_comes_next(tmp_path, prefix):
    """An INT in hex, or cut by a NUL, once stopped our reader (the pickle was "not judged");
    it now reads them as torch.load's C unpickler does, and meets the os.system after them."""
    path = tmp_path / "pytorch_model.bin"
    path.write_bytes(prefix + _SYSTEM_P0)
    found = scan_file(str(path))
    assert found.status is ScanStatus.REFUSED and found.error is None
    assert [(i.name, i.verdict) for i in found.imports] == [("os.system", ImportVerdict.REFUSED)]


def test_a_safetensors_file_named_like_a_pickle_is_judged_as_torch_load_would(tmp_path):
    path = tmp_path / "pytorch_model.bin"
    save_file({"a": np.zeros(2, np.float32)}, str(path))  # its first byte is no opcode
    assert scan_file(str(path)).status is ScanStatus.CLEAN
    body = bytearray(path.read_bytes())
    body[0] = ord("I")  # a header length whose first byte is INT: a pickle we cannot follow
    path.write_bytes(bytes(body))
    assert scan_file(str(path), in_folder=True).status is not ScanStatus.CLEAN


def test_a_valid_safetensors_file_whose_pickle_cannot_be_followed_is_not_judged(tmp_path):
    """Its header length's first byte is 0x49, INT: torch.load of it under a checkpoint's name
    starts a pickle we cannot follow to its end, so it is not called clean. Under a name no
    loader hands to torch.load, it is the data-only file it is."""
    import struct

    text = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    body = struct.pack("<Q", 0x149) + text.ljust(0x149) + bytes(8)
    for name in ("pytorch_model.bin", "model.safetensors"):
        (tmp_path / name).write_bytes(body)
    path = str(tmp_path / "pytorch_model.bin")
    why = "pickle ends in the middle of a text argument (truncated or corrupt)"
    assert scan_file(path) == FileScan(
        path,
        "safetensors",
        error=f"named like a checkpoint torch.load reads, and its pickle could not be followed "
        f"to its end ({why}); not judged",
    )
    path = str(tmp_path / "model.safetensors")
    assert scan_file(path) == FileScan(path, "safetensors")


def test_a_legacy_file_that_ends_between_its_pickles_is_judged_on_what_it_holds(tmp_path):
    """Cut after its fourth pickle (no storage keys): torch.load stops there too, having run
    what the four import; no error is made up for the end of the file."""
    from inspector.core.formats.torch_pickle.archive import LEGACY_MAGIC

    path = tmp_path / "old.pt"
    path.write_bytes(
        pickle.dumps(LEGACY_MAGIC, 2)
        + pickle.dumps(1001, 2)
        + pickle.dumps({"little_endian": True}, 2)
        + b"\x80\x02cos\nsystem\n."
    )
    assert scan_file(str(path)) == FileScan(str(path), "torch legacy", [ImportSeen("os.system", R)])


def _zip(path, members):
    import zipfile

    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members:
            zf.writestr(name, data)


def test_a_torchscript_finding_comes_first_before_the_zip_problems(tmp_path):
    path = tmp_path / "model.pt"
    _zip(
        path,
        [
            ("m/data.pkl", b"\x80\x02]."),
            ("m/DATA.PKL", b"\x80\x02]."),
            ("m/constants.pkl", b"\x80\x02)."),
        ],
    )
    assert scan_file(str(path)).findings == [
        "is a TorchScript archive: torch.load hands it to torch.jit.load, which runs the code it "
        "holds",
        "members 'm/data.pkl' and 'm/DATA.PKL' have the same name to torch's zip reader (it "
        "ignores case)",
    ]


def test_the_pkl_members_of_a_zip_are_read_up_to_their_budget_in_all(tmp_path, monkeypatch):
    """A zip of many .pkl members must not keep a scan busy for hours: all the members together
    are read up to a budget (256 MiB), shrunk here to exactly the 4 + 14 bytes of the two."""
    from inspector.core.scan import walk

    path = tmp_path / "model.pt"
    _zip(path, [("m/data.pkl", b"\x80\x02]."), ("m/z.pkl", b"\x80\x02cos\nsystem\n.")])
    monkeypatch.setattr(walk, "_PKL_BUDGET", 18)
    assert scan_file(str(path)) == FileScan(str(path), "torch zip", [ImportSeen("os.system", R)])
    monkeypatch.setattr(walk, "_PKL_BUDGET", 17)
    assert scan_file(str(path)) == FileScan(
        str(path), "torch zip", error="its .pkl members hold over 17 B; the rest not read"
    )


def _tar(path, members):
    import io
    import tarfile

    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


_TAR = "is a tar-format checkpoint (torch < 0.4): torch.load unpickles its members; not read"


def test_a_tar_checkpoint_lists_what_its_members_import_from_their_first_byte(tmp_path):
    """An empty member is no pickle to report (torch fails on it before running anything); a
    member damaged at its first byte is; damage after a whole pickle is not torch's concern."""
    path = tmp_path / "old.tar"
    _tar(path, [("storages", b"\x80\x02cos\nsystem\n.\xff"), ("tensors", b"")])
    assert scan_file(str(path)) == FileScan(
        str(path), "torch tar", [ImportSeen("os.system", R)], findings=[_TAR]
    )
    _tar(path, [("storages", b"\x80\x02]."), ("pickle", b"\xff")])
    assert scan_file(str(path)) == FileScan(
        str(path),
        "torch tar",
        error="pickle: pickle uses an unknown opcode 0xff at byte 0",
        findings=[_TAR],
    )


def test_a_tar_that_is_also_a_gzip_of_another_tar_is_judged_by_the_tar_torch_reads(tmp_path):
    """torch.load's legacy path opens a tar with tarfile's mode "r:", no compression: of a file
    that is both a plain tar and a gzip stream of another tar, it unpickles the plain tar's
    members (its payload runs: gzip-tar-twin, test_torch_pickle_container). Mode "r" reads the
    gzipped tar first; a scan that opened it so judged a benign pickle torch never reads.
    (Mutation testing.)"""
    from tests.hostile.containers import gzip_tar

    path = tmp_path / "twin.tar"
    path.write_bytes(gzip_tar({"storages": b"\x80\x02cos\nsystem\n."}, {"storages": b"\x80\x02]."}))
    assert scan_file(str(path)) == FileScan(
        str(path), "torch tar", [ImportSeen("os.system", R)], findings=[_TAR]
    )


def test_a_hard_link_in_a_tar_checkpoint_is_read_as_the_member_it_names(tmp_path):
    """torch's tar path extracts "storages" into a temporary folder: a hard link to a member
    before it is written with that member's bytes, and unpickled (its payload runs, shown). The
    scan listed nothing for it; it lists what that member imports, and so for a symbolic link
    (copied where none can be made). A link that names no member before it (a file outside, or
    a member after it: torch's extract fails) stays unread; the tar's finding says so."""
    import tarfile

    from tests.hostile.containers import tar_link
    from tests.hostile_folders import evil_pickle

    path, canary = tmp_path / "old.tar", tmp_path / "CANARY"
    # tarfile looks the member up by its normal path; a member named "../evil" is read unless
    # a file ../evil is beside torch's temporary folder
    for link_to, first in (("evil", "evil"), ("x/../evil", "evil"), ("./evil", "evil"),
                           ("../evil", "../evil")):  # fmt: skip
        path.write_bytes(tar_link(evil_pickle(canary), link_to, first=first))
        canary.unlink(missing_ok=True)
        with pytest.raises(EOFError):  # after the payload, torch finds no "tensors" pickle
            torch.load(path, weights_only=False)
        assert canary.exists(), link_to
        assert scan_file(str(path)) == FileScan(
            str(path), "torch tar", [ImportSeen("os.system", R)], findings=[_TAR]
        ), link_to
    for link_to in (str(tmp_path / "evil"), "../evil", "a/../../evil", "late"):  # no member
        path.write_bytes(tar_link(b"", link_to, late=evil_pickle(canary)))
        assert scan_file(str(path)) == FileScan(str(path), "torch tar", findings=[_TAR]), link_to
    # a symbolic link: where none can be made (Windows), tarfile copies the member it names
    path.write_bytes(tar_link(evil_pickle(canary), kind=tarfile.SYMTYPE))
    assert scan_file(str(path)).imports == [ImportSeen("os.system", R)]


def test_a_gzipped_tar_is_not_read_as_a_tar_checkpoint(tmp_path):
    """torch.load opens a tar uncompressed: a ``.tar.gz`` of a payload fails as a pickle
    ("invalid load key") before anything runs, so scan does not judge its members (a mode that
    let tarfile decompress it called it a torch tar that imports os.system)."""
    import io
    import tarfile

    from tests.hostile_folders import evil_pickle

    path, canary = tmp_path / "old.tar.gz", tmp_path / "CANARY"
    with tarfile.open(path, "w:gz") as tf:
        info = tarfile.TarInfo("storages")
        info.size = len(payload := evil_pickle(canary))
        tf.addfile(info, io.BytesIO(payload))
    with pytest.raises(pickle.UnpicklingError, match="invalid load key"):
        torch.load(path, weights_only=False)
    assert not canary.exists()
    found = scan_file(str(path))
    assert (found.format, found.imports) == ("unknown", [])


def test_a_tar_checkpoint_lists_the_imports_of_each_member_past_a_linked_one(tmp_path):
    """torch's tar path unpickles "storages", "tensors" and "pickle": a linked "storages" (torch
    follows it out of the archive) is not read, and the two after it still are. (Mutation
    testing: skipping "tensors", or stopping at the link, hid what they import.)"""
    import io
    import tarfile

    path = tmp_path / "old.tar"
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tf:
        link = tarfile.TarInfo("storages")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(link)
        for name, data in (
            ("tensors", b"\x80\x02cposix\nsystem\n."),
            ("pickle", b"\x80\x02cbuiltins\nexec\n."),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    assert scan_file(str(path)) == FileScan(
        str(path),
        "torch tar",
        [ImportSeen("posix.system", R), ImportSeen("builtins.exec", R)],
        findings=[_TAR],
    )


def test_a_tar_member_is_read_only_up_to_the_pickle_limit(tmp_path, monkeypatch):
    """The limit (256 MiB) bounds what a hostile tar makes a scan hold; shrunk to 8 bytes here,
    the member is cut there and the cut pickle is the error."""
    from inspector.core.scan import walk

    monkeypatch.setattr(walk, "MAX_PICKLE_BYTES", 8)
    path = tmp_path / "old.tar"
    _tar(path, [("storages", b"\x80\x02cos\nsystem\n.")])
    assert scan_file(str(path)) == FileScan(
        str(path),
        "torch tar",
        error="storages: pickle ends in the middle of a text argument (truncated or corrupt)",
        findings=[_TAR],
    )


@pytest.mark.parametrize("extra", [65_535, 65_536])
def test_bytes_after_a_zips_end_record_are_a_finding_up_to_where_zipfile_looks(tmp_path, extra):
    """zipfile finds an end record up to 65,558 bytes before the end of the file (a comment's
    largest size plus the record's 22): at the far edge too, the scan sees the same record
    zipfile reads and says the bytes after it are there, rather than calling it damaged."""
    path = tmp_path / "model.pt"
    _zip(path, [("m/data.pkl", b"\x80\x02].")])
    with open(path, "ab") as f:
        f.write(bytes(extra))
    assert scan_file(str(path)) == FileScan(
        str(path),
        "torch zip",
        findings=["its end-of-directory record is not at the end of the file"],
    )


@pytest.mark.parametrize("name", [".gitkeep", "__init__.py", "notes.txt"])
def test_an_empty_file_of_no_checkpoint_name_in_a_folder_is_not_a_checkpoint(tmp_path, name):
    """A model repository's empty .gitkeep or __init__.py holds nothing torch could run and is
    loaded by nobody: it is "not a checkpoint", and the folder keeps its verdict (the scan said
    "unreadable" and exited 2 for the whole folder). An empty file *named* like a checkpoint is
    still reported (a download cut short), as test_an_empty_checkpoint_in_a_folder... says."""
    save_file({"a": np.zeros(2, np.float32)}, str(tmp_path / "model.safetensors"))
    (tmp_path / name).write_bytes(b"")
    report = scan_path(tmp_path)
    assert FileScan(str(tmp_path / name), "not a checkpoint") in report.files
    assert report.status is ScanStatus.CLEAN


@pytest.mark.parametrize("name", ["model.safetensors", "m.bpk", "m.gguf", "x.pt", "a.ckpt"])
def test_an_empty_file_named_like_a_checkpoint_in_a_folder_is_unreadable(tmp_path, name):
    (tmp_path / name).write_bytes(b"")
    report = scan_path(tmp_path)
    assert report.status is ScanStatus.UNREADABLE and report.files[0].error


def test_a_damaged_data_checkpoint_in_a_folder_is_unreadable_in_its_own_format(tmp_path):
    """A .safetensors, .bpk or .gguf file is opened by its name (transformers, burn-store,
    llama.cpp): cut short or damaged, it is news in a scanned folder, as an empty one is. It was
    "not a checkpoint", the folder clean. Each is refused by its own format's reader, by name
    when the magic is gone (an empty .bpk said "too short to be safetensors")."""
    save_file({"a": np.arange(64, dtype=np.float32)}, str(tmp_path / "whole.safetensors"))
    whole = (tmp_path / "whole.safetensors").read_bytes()
    (tmp_path / "cut.safetensors").write_bytes(whole[:40])
    (tmp_path / "garbage.bpk").write_bytes(b"garbage, no burnpack here")
    (tmp_path / "empty.bpk").write_bytes(b"")
    (tmp_path / "short.gguf").write_bytes(b"GGUFjunk")
    report = scan_path(tmp_path)
    assert report.status is ScanStatus.UNREADABLE
    assert [(os.path.basename(f.path), f.format, f.error) for f in report.files] == [
        (
            "cut.safetensors",
            "unknown",
            "header length 64 bytes runs past the end of the file (40 bytes): truncated or not "
            "safetensors",
        ),
        ("empty.bpk", "unknown", "file is too short to be Burnpack (0 bytes; the header is 10)"),
        (
            "garbage.bpk",
            "unknown",
            "not a Burnpack file: it starts with b'garb', not the magic b'NRUB'",
        ),
        ("short.gguf", "unknown", "file is too short to be GGUF (8 bytes; the header alone is 24)"),
        ("whole.safetensors", "safetensors", None),
    ]


def test_a_bin_file_of_another_format_in_a_folder_is_still_not_a_checkpoint(tmp_path):
    """A non-empty .bin that is no pickle (a fastText model: its magic's first byte 0xBA is no
    pickle opcode, so torch.load stops at once) is not torch's: "not a checkpoint", and the
    folder keeps its verdict."""
    save_file({"a": np.zeros(2, np.float32)}, str(tmp_path / "model.safetensors"))
    (tmp_path / "lid.176.bin").write_bytes(bytes.fromhex("ba164f2f0c000000") + bytes(56))
    report = scan_path(tmp_path)
    assert FileScan(str(tmp_path / "lid.176.bin"), "not a checkpoint") in report.files
    assert report.status is ScanStatus.CLEAN
