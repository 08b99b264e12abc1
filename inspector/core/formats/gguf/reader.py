"""Read a GGUF file's header (key/values and tensor infos), never its tensor data.

Every count and length is checked against the bytes left before it is used (GGUF parsers have
a record of trusting them): a huge tensor or key count, a string or array running past the
file, arrays of arrays, an unknown value or tensor type, a version other than 2 or 3. The data
layout is judged as llama.cpp's ``gguf.cpp`` judges it: tensors in the order of their infos,
each at the running offset padded to the alignment, inside the file; nothing after them.
"""

from __future__ import annotations

import math
import mmap
import os
import struct

from ...errors import CheckpointError
from ...layout import Header, TensorInfo
from ...regular_file import open_regular
from ...wording import _q
from .facts import ArraySummary, GgufFacts
from .spec import (
    ARRAY,
    DEFAULT_ALIGNMENT,
    FORMAT_NAME,
    GGML_TYPES,
    MAGIC,
    MAX_DIMS,
    MAX_NAME,
    STRING,
    VALUE_TYPES,
    VERSIONS,
    aligned,
)
from .tensor import GgufBlocksInfo

_KEPT_ARRAY = 64  # arrays up to this many elements are kept; longer ones are summarised
_INT64_MAX = 2**63 - 1
_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")


class _Cursor:
    """Bounds-checked little-endian reads from the mapped file."""

    def __init__(self, path: str, buf: mmap.mmap, size: int) -> None:
        self.path, self.buf, self.size, self.pos = path, buf, size, 0

    def need(self, n: int, what: str) -> None:
        if n > self.size - self.pos:
            raise CheckpointError(
                self.path,
                f"{what} runs past the end of the file (needs {n:,} bytes at byte {self.pos:,}, "
                f"the file has {self.size:,}): truncated or not GGUF",
            )

    def u32(self, what: str) -> int:
        self.need(4, what)
        (v,) = _U32.unpack_from(self.buf, self.pos)
        self.pos += 4
        return v

    def u64(self, what: str) -> int:
        self.need(8, what)
        (v,) = _U64.unpack_from(self.buf, self.pos)
        self.pos += 8
        return v

    def raw_string(self, what: str) -> bytes:
        n = self.u64(f"the length of {what}")
        self.need(n, what)
        s = self.buf[self.pos : self.pos + n]
        self.pos += n
        return s

    def string(self, what: str) -> str:
        raw = self.raw_string(what)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise CheckpointError(self.path, f"{what} is not valid UTF-8") from None

    def skip_strings(self, count: int, what: str) -> None:
        buf, pos, size = self.buf, self.pos, self.size
        unpack = _U64.unpack_from
        for _ in range(count):
            if pos + 8 > size:
                self.pos = pos
                self.need(8, what)
            (n,) = unpack(buf, pos)
            pos += 8 + n
            if pos > size:
                self.pos = pos - n
                self.need(n, what)
        self.pos = pos


def read_gguf(path: str | os.PathLike[str]) -> Header:
    """Read and validate one ``.gguf`` file's header; raise CheckpointError if invalid."""
    path = os.fspath(path)
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size < 24:
            raise CheckpointError(
                path, f"file is too short to be GGUF ({size} bytes; the header alone is 24)"
            )
        try:
            buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as e:
            raise CheckpointError(path, f"cannot read: {e}") from None
    with buf:
        return _read(path, buf, size)


def _read(path: str, buf: mmap.mmap, size: int) -> Header:
    cur = _Cursor(path, buf, size)
    magic = bytes(buf[:4])
    if magic != MAGIC:
        raise CheckpointError(path, f"not a GGUF file: it starts with {magic!r}, not b'GGUF'")
    cur.pos = 4
    version = cur.u32("the version")
    if version not in VERSIONS:
        swapped = struct.unpack("<I", struct.pack(">I", version))[0]
        why = (
            "a big-endian GGUF (this tool reads little-endian ones)"
            if swapped in VERSIONS
            else "this tool reads GGUF versions 2 and 3"
        )
        raise CheckpointError(path, f"GGUF version {version}: {why}")
    n_tensors = cur.u64("the tensor count")
    n_kv = cur.u64("the key/value count")
    # each key/value takes at least 8 + 4 + 1 bytes, each tensor info 8 + 4 + 4 + 8
    if n_kv > (size - cur.pos) // 13:
        raise CheckpointError(path, f"{n_kv:,} key/values cannot fit in a {size:,}-byte file")
    if n_tensors > (size - cur.pos) // 24:
        raise CheckpointError(path, f"{n_tensors:,} tensors cannot fit in a {size:,}-byte file")
    facts = GgufFacts(version)
    for _ in range(n_kv):
        key = cur.string("a key")
        if key in facts.kv:
            raise CheckpointError(path, f"key {_q(key)} appears twice")
        vtype = cur.u32(f"the type of {_q(key)}")
        if key == "general.alignment" and vtype != 4:  # llama.cpp reads it as a uint32
            raise CheckpointError(path, f"general.alignment has value type {vtype}, not uint32")
        facts.kv[key] = _value(cur, vtype, key)
    alignment = facts.kv.get("general.alignment", DEFAULT_ALIGNMENT)
    if type(alignment) is not int or alignment <= 0 or alignment & (alignment - 1):
        raise CheckpointError(path, f"general.alignment {alignment!r} is not a power of 2")
    facts.alignment = alignment
    infos = [_tensor_info(cur, facts) for _ in range(n_tensors)]
    data_start = aligned(cur.pos, alignment)
    tensors = _layout(path, infos, facts, data_start, size)
    metadata = {k: facts.text(k) for k in facts.kv}
    return Header(path, tensors, metadata or None, data_start, size, FORMAT_NAME, facts=facts)


def _value(cur: _Cursor, vtype: int, key: str) -> object:
    what = f"the value of {_q(key)}"
    if vtype == STRING:
        raw = cur.raw_string(what)
        return raw.decode("utf-8", "replace")
    if vtype == ARRAY:
        etype = cur.u32(f"the element type of {_q(key)}")
        count = cur.u64(f"the length of {_q(key)}")
        if etype == ARRAY:
            raise CheckpointError(cur.path, f"{_q(key)} is an array of arrays (not supported)")
        if etype not in VALUE_TYPES:
            raise CheckpointError(cur.path, f"{_q(key)}: unknown element type {etype}")
        name, fmt = VALUE_TYPES[etype]
        if etype == STRING:
            if count > (cur.size - cur.pos) // 8:
                cur.need(count * 8, what)
            if count > _KEPT_ARRAY:
                cur.skip_strings(count, what)
                return ArraySummary(name, count)
            return [cur.raw_string(what).decode("utf-8", "replace") for _ in range(count)]
        assert fmt is not None
        item = struct.calcsize(fmt)
        cur.need(count * item, what)
        if count > _KEPT_ARRAY:
            cur.pos += count * item
            return ArraySummary(name, count)
        values = list(struct.unpack_from(f"<{count}{fmt[1]}", cur.buf, cur.pos))
        cur.pos += count * item
        return values
    if vtype not in VALUE_TYPES:
        raise CheckpointError(cur.path, f"{_q(key)}: unknown value type {vtype}")
    fmt = VALUE_TYPES[vtype][1]
    assert fmt is not None
    n = struct.calcsize(fmt)
    cur.need(n, what)
    (v,) = struct.unpack_from(fmt, cur.buf, cur.pos)
    cur.pos += n
    return v


def _tensor_info(cur: _Cursor, facts: GgufFacts) -> tuple[str, tuple[int, ...], int, int]:
    name = cur.string("a tensor name")
    path = cur.path
    if len(name.encode("utf-8")) >= MAX_NAME:
        raise CheckpointError(
            path, f"tensor name {_q(name)} is {MAX_NAME} bytes or longer (llama.cpp refuses it)"
        )
    n_dims = cur.u32(f"the dimension count of {_q(name)}")
    if n_dims > MAX_DIMS:
        raise CheckpointError(path, f"tensor {_q(name)}: {n_dims} dimensions (ggml has at most 4)")
    cur.need(8 * n_dims, f"the dimensions of {_q(name)}")
    dims = struct.unpack_from(f"<{n_dims}Q", cur.buf, cur.pos)
    cur.pos += 8 * n_dims
    type_id = cur.u32(f"the type of {_q(name)}")
    offset = cur.u64(f"the offset of {_q(name)}")
    if any(d > _INT64_MAX for d in dims) or math.prod(dims) > _INT64_MAX:
        raise CheckpointError(path, f"tensor {_q(name)}: dimensions {list(dims)} overflow")
    ggml = GGML_TYPES.get(type_id)
    if ggml is None:
        raise CheckpointError(path, f"tensor {_q(name)}: unknown ggml type {type_id}")
    if n_dims == 0:
        raise CheckpointError(path, f"tensor {_q(name)}: no dimensions (llama.cpp refuses it)")
    if ggml.plain is None and math.prod(dims) == 0:
        raise CheckpointError(path, f"tensor {_q(name)}: a {ggml.name} tensor of no values")
    if dims and dims[0] % ggml.block:
        raise CheckpointError(
            path,
            f"tensor {_q(name)}: rows of {dims[0]:,} values are not whole {ggml.name} blocks "
            f"of {ggml.block}",
        )
    if name in facts.types:
        raise CheckpointError(path, f"tensor name {_q(name)} appears twice")
    facts.types[name] = ggml
    facts.dims[name] = tuple(dims)
    return name, tuple(dims), ggml.id, offset


def _layout(
    path: str,
    infos: list[tuple[str, tuple[int, ...], int, int]],
    facts: GgufFacts,
    data_start: int,
    size: int,
) -> list[TensorInfo]:
    """Tensors in info order, each at the running offset padded to the alignment (as
    llama.cpp requires), inside the file, with nothing after the last one's padding."""
    align = facts.alignment
    pos = 0
    tensors = []
    for name, dims, type_id, offset in infos:
        ggml = GGML_TYPES[type_id]
        numel = math.prod(dims)
        nbytes = ggml.nbytes(numel)
        if offset != pos:
            raise CheckpointError(
                path,
                f"tensor {_q(name)}: data at offset {offset:,}, expected {pos:,} (llama.cpp "
                "reads tensors in the order of their infos, each padded to the alignment)",
            )
        end = offset + nbytes
        if data_start + end > size:
            raise CheckpointError(
                path,
                f"tensor {_q(name)}: data ends at byte {data_start + end:,} but the file holds "
                f"only {size:,}: truncated",
            )
        shape = tuple(reversed(dims))  # ggml lists the innermost dimension first
        if ggml.plain is not None:
            t = TensorInfo(dtype_name=ggml.plain, shape=shape, data_offsets=(offset, end))
        else:  # quantized blocks: the stored bytes, and the weight they stand for
            t = GgufBlocksInfo(
                dtype_name="U8",
                shape=(nbytes,),
                data_offsets=(offset, end),
                ggml_id=type_id,
                logical=shape,
            )
        t.name, t.file = name, path
        tensors.append(t)
        pos = aligned(end, align)
    if size > data_start + pos:  # the last tensor's padding may be written or not
        raise CheckpointError(
            path,
            f"{size - data_start - pos:,} bytes after the last tensor are not described by the "
            "header (trailing data)",
        )
    return tensors
