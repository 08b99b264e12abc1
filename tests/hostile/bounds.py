"""Small files that made the pickle reader use gigabytes or hang: each builder returns the bytes
of a whole file (a raw pickle, which torch.load would unpickle). None needs torch to make."""

from __future__ import annotations

import struct
from pathlib import Path

P4 = b"\x80\x04"


def torch_zip(pickle_body: bytes, storage: bytes = b"\x00" * 16) -> bytes:
    """A torch zip checkpoint: ``a/data.pkl`` (protocol 4 + ``pickle_body``) and storage "0"."""
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("a/data.pkl", P4 + pickle_body)
        zf.writestr("a/byteorder", b"little")
        zf.writestr("a/data/0", storage)
    return buf.getvalue()


def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _binbytes(data: bytes) -> bytes:
    return b"B" + struct.pack("<I", len(data)) + data


def _long4(value: int) -> bytes:
    raw = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8b" + struct.pack("<i", len(raw)) + raw


def memo_flood(_: Path) -> bytes:
    """16 M MEMOIZE of one value: a memo entry each, counted against no limit."""
    return torch_zip(b"N" + b"\x94" * 16_000_000 + b".")


def empty_set_flood(_: Path) -> bytes:
    """8 M empty sets (216 bytes each for 1 byte of input), gathered in a list."""
    return torch_zip(b"(" + b"\x8f" * 8_000_000 + b"l.")


def bytearray_copies(_: Path) -> bytes:
    """One 1 MB bytes object handed 1,500 times to the allowlisted bytearray: 1.5 GB."""
    body = _global("builtins", "bytearray") + b"\x940" + _binbytes(b"x" * (1 << 20)) + b"\x94"
    calls = b"h\x00h\x01\x85R" * 1500
    return torch_zip(body + b"0(" + calls + b"l.")


def shared_list_tree(_: Path) -> bytes:
    """A list holding the same list twice, 40 levels: 2**40 paths for a walk that does not
    remember where it has been, from a file of a few hundred bytes."""
    out = b"]\x940"  # level 0, memo 0
    for i in range(40):
        out += b"(" + b"h" + bytes([i]) + b"h" + bytes([i]) + b"l\x940"
    return torch_zip(b"}X\x01\x00\x00\x00w" + out + b"h" + bytes([40]) + b"s.")


def shared_tuple_keys(_: Path) -> bytes:
    """2,000 dict keys each a tuple DAG 15 levels deep (2**15 leaves by a tree walk)."""
    out = b")\x940"  # t0 = (), memo 0
    for i in range(14):
        out += b"h" + bytes([i]) + b"h" + bytes([i]) + b"\x86\x940"  # t(i+1) = (t_i, t_i)
    out += b"}("
    for k in range(2000):
        out += b"h\x0e" + b"M" + struct.pack("<H", k) + b"\x86" + b"N"  # key (t14, k): None
    return torch_zip(out + b"u.")


def huge_int_in_key(_: Path) -> bytes:
    """A dict whose key is a tuple holding 10**5000: str() of it raises ValueError."""
    return torch_zip(b"}" + _long4(10**5000) + b"\x85" + b"N" + b"s.")


def deep_value(_: Path) -> bytes:
    """A value nested 100,000 tuples deep."""
    return torch_zip(b"}X\x01\x00\x00\x00vN" + b"\x85" * 100_000 + b"s.")


def _rebuild(
    shape: bytes, stride: bytes, storage_numel: int, offset: int = 0, prefix: bytes = b""
) -> bytes:
    """``{"w": _rebuild_tensor_v2(FloatStorage, offset, shape, stride)}`` as a raw pickle
    with a persistent id (a legacy checkpoint's object pickle would look the same)."""
    pid = (
        b"(X\x07\x00\x00\x00storage"
        + _global("torch", "FloatStorage")
        + b"X\x01\x00\x00\x000X\x03\x00\x00\x00cpu"
        + b"J"
        + struct.pack("<i", storage_numel)
        + b"tQ"
    )
    return torch_zip(
        prefix
        + b"}X\x01\x00\x00\x00w"
        + _global("torch._utils", "_rebuild_tensor_v2")
        + b"("
        + pid
        + b"J"
        + struct.pack("<i", offset)
        + shape
        + stride
        + b"\x89"
        + _global("collections", "OrderedDict")
        + b")Rtq\x00R"
        + b"s.",
        b"\x00" * 4 * storage_numel,  # the size the pickle declares, as torch checks
    )


def huge_dims(_: Path) -> bytes:
    """2,000 dimensions each 2**500000 (one LONG4 memoized, fetched 2,000 times)."""
    big = _long4(2**500_000) + b"\x94"
    dims = b"(" + b"h\x00" * 2000 + b"t"
    ones = b"(" + b"K\x01" * 2000 + b"t"
    return _rebuild(dims, ones, 1, prefix=big + b"0")


def shape_2_64(_: Path) -> bytes:
    return _rebuild(b"(" + _long4(2**64) + b"t", b"(K\x01t", 1)


def broadcast_2_40(_: Path) -> bytes:
    """A stride-0 view of 2**40 elements over a one-element storage."""
    return _rebuild(b"(J\x00\x00\x10\x00J\x00\x00\x10\x00t", b"(K\x00K\x00t", 1)


BUILDERS = {
    "memo-flood": memo_flood,
    "empty-set-flood": empty_set_flood,
    "bytearray-copies": bytearray_copies,
    "shared-list-tree": shared_list_tree,
    "shared-tuple-keys": shared_tuple_keys,
    "huge-int-in-key": huge_int_in_key,
    "deep-value": deep_value,
    "huge-dims": huge_dims,
    "shape-2-64": shape_2_64,
    "broadcast-2-40": broadcast_2_40,
}
