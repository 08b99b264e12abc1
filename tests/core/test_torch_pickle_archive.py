"""Where torch.save's layouts keep the pickle and the storages: the zip's members (and the ones
that are not storages), the legacy file's count-then-bytes records to the last byte, and the
reason for each kind of damage."""

from __future__ import annotations

import io
import mmap
import struct
import tarfile
import zipfile

import pytest

from inspector.core.errors import CheckpointError
from inspector.core.formats.torch_pickle.archive import (
    LEGACY_MAGIC,
    LEGACY_PROTOCOL,
    StorageSpan,
    check_legacy_header,
    legacy_storage_spans,
    read_zip,
)
from inspector.core.formats.torch_pickle.containers import is_torch_tar


def _zip(members: dict[str, bytes]) -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    buf.seek(0)
    return buf


def test_a_zip_layout_names_its_pickles_and_storages_to_the_byte():
    buf = _zip(
        {
            "arch/data.pkl": b"\x80\x02N.",
            "arch/byteorder": b"little",
            "arch/data/0": b"\x01\x02\x03\x04",
            "arch/data/1": b"",
            "arch/data/sub/2": b"zz",  # deeper than data/: not a storage
            "arch/datax/3": b"yy",
            "arch/extra.pkl": b"\x80\x02K\x01.",
        }
    )
    layout = read_zip("f.pt", buf)
    assert layout.prefix == "arch/" and layout.pickle == b"\x80\x02N."
    assert set(layout.storages) == {"0", "1"}
    raw = buf.getvalue()
    span = layout.storages["0"]
    assert raw[span.offset : span.offset + span.nbytes] == b"\x01\x02\x03\x04"
    assert layout.storages["1"].nbytes == 0
    assert not hasattr(layout, "other_pickles")  # list reads data.pkl only; scan reads the rest


def test_byteorder_is_little_exactly_and_not_big_or_long():
    read_zip("f.pt", _zip({"a/data.pkl": b"N.", "a/byteorder": b"little"}))
    for order in (b"little          ", b""):  # torch.load refuses both (test_torch_pickle_records)
        with pytest.raises(CheckpointError, match="torch refuses it"):
            read_zip("f.pt", _zip({"a/data.pkl": b"N.", "a/byteorder": order}))
    with pytest.raises(CheckpointError) as e:
        read_zip("f.pt", _zip({"a/data.pkl": b"N.", "a/byteorder": b"big"}))
    assert e.value.reason == "was saved on a big-endian machine; this tool reads little-endian only"
    assert e.value.path == "f.pt"
    with pytest.raises(CheckpointError) as e:
        read_zip("f.pt", _zip({"a/data.pkl": b"N.", "a/byteorder": b"little" + b" " * 11}))
    assert (e.value.path, e.value.reason) == (
        "f.pt",
        "a/byteorder is over 16 B; not a checkpoint pickle",
    )


def test_zip_damage_is_worded():
    with pytest.raises(CheckpointError) as e:
        read_zip("f.pt", io.BytesIO(b"PK\x03\x04 not really"))
    assert (e.value.path, e.value.reason) == (
        "f.pt",
        "is a damaged zip archive (File is not a zip file)",
    )
    with pytest.raises(CheckpointError) as e:
        read_zip("f.pt", _zip({"a/data.pkl": b"N.", "b/data.pkl": b"N."}))
    assert (
        e.value.reason == "is a zip archive with 2 <folder>/data.pkl; not a torch.save checkpoint"
    )
    with pytest.raises(CheckpointError) as e:
        read_zip("f.pt", _zip({"a/code/x.py": b"", "a/data.pkl": b"N."}))
    assert e.value.reason.startswith("this is a TorchScript archive (torch.jit.save: code plus")
    with pytest.raises(CheckpointError) as e:  # constants without code: TorchScript too
        read_zip("f.pt", _zip({"a/constants.pkl": b"N.", "a/data.pkl": b"N."}))
    assert e.value.path == "f.pt"
    assert e.value.reason.startswith("this is a TorchScript archive (torch.jit.save: code plus")


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_a_tar_checkpoint_is_recognised_as_torch_tries_it(fmt):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tf:
        info = tarfile.TarInfo("sys_info")
        tf.addfile(info, io.BytesIO(b""))
    assert is_torch_tar(io.BytesIO(buf.getvalue()))
    assert not is_torch_tar(io.BytesIO(b"\0" * 512)) and not is_torch_tar(io.BytesIO(b""))


def test_a_v7_tar_without_ustar_magic_is_a_tar_too():
    """Python's tarfile (which torch.load tries first) takes a V7 header with no "ustar" magic:
    its first member may even be named like a pickle. It was not recognised."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        info = tarfile.TarInfo("\x80\x02}.")
        tf.addfile(info, io.BytesIO(b""))
    raw = bytearray(buf.getvalue())
    raw[257:265] = b"\0" * 8  # no magic, no version: a V7 header
    raw[148:156] = b"        "
    raw[148:155] = (b"%06o\0" % sum(raw[:512]))[:7]
    assert raw[257:262] != b"ustar"
    assert is_torch_tar(io.BytesIO(bytes(raw)))


def test_the_legacy_header_is_checked_field_by_field():
    ok = {"little_endian": True}
    check_legacy_header("f", [LEGACY_MAGIC, LEGACY_PROTOCOL, ok])
    big = "was saved on a big-endian machine; this tool reads little-endian only"
    for values, says in (
        (
            [LEGACY_MAGIC + 1, LEGACY_PROTOCOL, ok],
            "is a plain Python pickle, not a torch.save checkpoint (no PyTorch magic number)",
        ),
        ([LEGACY_MAGIC, 1000, ok], "uses torch legacy protocol 1000; only 1001 is known"),
        (  # a value from the file is shown clipped to 40 characters
            [LEGACY_MAGIC, "p" * 60, ok],
            f"uses torch legacy protocol {'p' * 40!r}…; only 1001 is known",
        ),
        ([LEGACY_MAGIC, LEGACY_PROTOCOL, {"little_endian": False}], big),
        ([LEGACY_MAGIC, LEGACY_PROTOCOL, None], big),  # not even a dict
    ):
        with pytest.raises(CheckpointError) as e:
            check_legacy_header("f", values)
        assert (e.value.path, e.value.reason) == ("f", says)


def _records(tmp_path, body: bytes):
    path = tmp_path / "legacy.bin"
    path.write_bytes(b"P" * 5 + body)
    f = open(path, "rb")  # noqa: SIM115 - closed by the test
    return f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def test_legacy_storages_are_read_to_the_last_byte(tmp_path):
    body = struct.pack("<q", 2) + b"\xaa" * 8 + struct.pack("<q", 0)  # F32 × 2, then empty
    f, mm = _records(tmp_path, body)
    with f, mm:
        spans = legacy_storage_spans("f", mm, 5, ["a", "b"], {"a": 4, "b": 2})
        assert spans == {"a": StorageSpan(13, 8), "b": StorageSpan(29, 0)}


LEGACY = "legacy checkpoint: "
SHORT = "file is shorter than its storages (truncated)"


@pytest.mark.parametrize(
    "body, keys, says",
    [
        (b"", ("a",), LEGACY + "the storage key list is damaged"),
        (b"", ["a", 1], LEGACY + "the storage key list is damaged"),
        (b"", ["z"], LEGACY + "storage 'z' is stored but never used"),
        (b"", ["k" * 100], LEGACY + f"storage {'k' * 80!r}… is stored but never used"),
        (b"\x02\x00\x00", ["a"], SHORT),
        (struct.pack("<q", 3) + b"\0" * 8, ["a"], SHORT),
        (struct.pack("<q", -1) + b"\0" * 8, ["a"], SHORT),
    ],
)
def test_legacy_storage_damage_is_worded(tmp_path, body, keys, says):
    f, mm = _records(tmp_path, body)
    with f, mm, pytest.raises(CheckpointError) as e:
        legacy_storage_spans("f", mm, 5, keys, {"a": 4})
    assert (e.value.path, e.value.reason) == ("f", says)


def test_each_zip_refusal_names_its_file():
    cases = [
        ({"a/other.txt": b"x"}, "is a zip archive with no <folder>/data.pkl; not a torch.save checkpoint"),
        ({"a/data.pkl": b"N.", "b/data.pkl": b"N."},
         "is a zip archive with 2 <folder>/data.pkl; not a torch.save checkpoint"),
    ]  # fmt: skip
    for members, reason in cases:
        with pytest.raises(CheckpointError) as e:
            read_zip("f.pt", _zip(members))
        assert (e.value.path, e.value.reason) == ("f.pt", reason)


def test_a_member_behind_a_bad_local_header_or_cut_out_is_named():
    """A local header that is not one, or a storage whose bytes were cut out of the middle of
    the file (zipfile then computes offsets before the start: a seek to -20 escaped as a
    ValueError, which the CLI misreported as a failed write to standard output)."""
    raw = bytearray(_zip({"a/data.pkl": b"N.", "a/data/0": b"\x01" * 64}).getvalue())
    local = raw.index(b"PK\x03\x04", raw.index(b"a/data/0") - 40)  # the storage's local header
    central = raw.index(b"PK\x01\x02")
    with pytest.raises(CheckpointError) as e:
        read_zip("f.pt", io.BytesIO(bytes(raw[:local]) + b"XX" + bytes(raw[local + 2 :])))
    assert (e.value.path, e.value.reason) == (
        "f.pt",
        "zip member a/data/0 has a damaged local header",
    )
    with pytest.raises(CheckpointError) as e:  # cut out: the directory moved from where it says
        read_zip("f.pt", io.BytesIO(bytes(raw[: local + 40]) + bytes(raw[central:])))
    assert e.value.reason.startswith(
        "is a zip archive torch's reader would read differently: its central directory is not "
        "where its end record says"
    )


def test_a_zip_torch_reads_differently_is_refused_by_its_first_problem_and_a_count():
    """The first problem whole, then how many more (one is worded alone)."""
    twins = {"a/data.pkl": b"N.", "a/data/0": b"", "a/DATA/0": b""}
    start = "is a zip archive torch's reader would read differently: members 'a/data/0' and "
    start += "'a/DATA/0' have the same name to torch's zip reader (it ignores case)"
    end = "; refused (see: checkpoint-inspector scan)"
    for more, also in (({}, ""), ({"a/Data/0": b""}, " (and 1 more problem(s))")):
        with pytest.raises(CheckpointError) as e:
            read_zip("f.pt", _zip({**twins, **more}))
        assert (e.value.path, e.value.reason) == ("f.pt", start + also + end)


def test_a_damaged_compressed_pickle_is_named():
    buf = io.BytesIO()
    payload = bytes(range(256)) * 64  # 16 KiB that deflate cannot shrink much
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a/data.pkl", payload)
    raw = bytearray(buf.getvalue())
    start = raw.index(b"a/data.pkl") + len("a/data.pkl")
    raw[start + 100 : start + 140] = b"\xff" * 40  # inside the deflate stream
    with pytest.raises(CheckpointError) as e:
        read_zip("f.pt", io.BytesIO(bytes(raw)))
    assert e.value.path == "f.pt" and e.value.reason.startswith("cannot read a/data.pkl (")


def test_a_local_header_with_a_long_extra_field_is_skipped_exactly():
    """Name and extra lengths are unsigned 16-bit: an extra field over 32 KiB still puts the
    data where it is."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("a/data.pkl", b"N.")
        info = zipfile.ZipInfo("a/data/0")
        pad = 40_000
        info.extra = struct.pack("<HH", 0xCAFE, pad) + b"\0" * pad
        zf.writestr(info, b"\x01\x02\x03\x04")
    buf.seek(0)
    layout = read_zip("f.pt", buf)
    span = layout.storages["0"]
    assert buf.getvalue()[span.offset : span.offset + span.nbytes] == b"\x01\x02\x03\x04"


def _with_size(raw: bytes, member: bytes, size: int) -> bytes:
    """The archive with ``member``'s size in its central directory entry forged to ``size``."""
    out = bytearray(raw)
    entry = out.index(member, out.index(b"PK\x01\x02")) - 46
    assert out[entry : entry + 4] == b"PK\x01\x02"
    out[entry + 20 : entry + 28] = struct.pack("<II", size, size)
    return bytes(out)


def test_a_storage_whose_size_runs_past_the_end_of_the_file_is_named():
    raw = _zip({"a/data.pkl": b"N.", "a/data/0": b"\x01" * 64}).getvalue()
    fits = read_zip("f.pt", io.BytesIO(raw)).storages["0"]
    room = len(raw) - fits.offset  # bytes from the storage's start to the end of the file
    assert (
        read_zip("f.pt", io.BytesIO(_with_size(raw, b"a/data/0", room))).storages["0"].nbytes
        == room
    )
    with pytest.raises(CheckpointError) as e:
        read_zip("f.pt", io.BytesIO(_with_size(raw, b"a/data/0", room + 1)))
    assert (e.value.path, e.value.reason) == (
        "f.pt",
        "zip member a/data/0 runs past the end of the file (truncated?)",
    )


def test_a_damaged_extra_pickle_is_named_by_scan_and_not_read_by_list(tmp_path):
    from inspector.core.scan.walk import scan_file

    buf = io.BytesIO()
    payload = bytes(range(256)) * 64
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("a/data.pkl", b"N.")
        zf.writestr("a/extra.pkl", payload, compress_type=zipfile.ZIP_DEFLATED)
    raw = bytearray(buf.getvalue())
    start = raw.index(b"a/extra.pkl") + len("a/extra.pkl")
    raw[start + 100 : start + 140] = b"\xff" * 40
    assert read_zip("f.pt", io.BytesIO(bytes(raw))).pickle == b"N."
    (tmp_path / "f.pt").write_bytes(bytes(raw))
    assert scan_file(str(tmp_path / "f.pt")).error == (
        "cannot read a/extra.pkl (Error -3 while decompressing data: invalid distance too far back)"
    )


def test_a_storage_stored_first_in_the_zip_is_read_at_offset_zero():
    buf = _zip({"a/data/0": b"\x05\x06", "a/data.pkl": b"N."})
    span = read_zip("f.pt", buf).storages["0"]
    assert buf.getvalue()[span.offset : span.offset + span.nbytes] == b"\x05\x06"


def test_a_long_read_error_is_cut_to_160_characters():
    """zipfile names the member in its error: under a 200-character folder the reason is cut
    to 160 characters, not left to run on. (Mutation testing: a cut at 161 passed.)"""
    name = "f" * 200 + "/data.pkl"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(name, bytes(range(256)) * 64)
    raw = bytearray(buf.getvalue())
    local, central = raw.index(b"PK\x03\x04"), raw.index(b"PK\x01\x02")
    half = struct.unpack_from("<I", raw, local + 18)[0] // 2  # the data stops early: bad CRC
    struct.pack_into("<I", raw, local + 18, half)
    struct.pack_into("<I", raw, central + 20, half)
    with pytest.raises(CheckpointError) as e:
        read_zip("f.pt", io.BytesIO(bytes(raw)))
    why = f"Bad CRC-32 for file {name!r}"
    assert len(why) > 160
    assert e.value.reason == f"cannot read {name} ({why[:160]})"


def test_a_read_error_without_words_is_named_by_its_kind():
    """A stored member whose sizes say 1 MB in a file of a few hundred bytes: zipfile raises a
    bare EOFError, and the reason names it by its kind. (Mutation testing: the kind of another
    object, "NoneType", passed.)"""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("a/data.pkl", b"N.")
    raw = bytearray(buf.getvalue())
    local, central = raw.index(b"PK\x03\x04"), raw.index(b"PK\x01\x02")
    for at in (local + 18, local + 22, central + 20, central + 24):  # both sizes, both headers
        struct.pack_into("<I", raw, at, 10**6)
    with pytest.raises(CheckpointError) as e:
        read_zip("f.pt", io.BytesIO(bytes(raw)))
    assert (e.value.path, e.value.reason) == ("f.pt", "cannot read a/data.pkl (EOFError)")
