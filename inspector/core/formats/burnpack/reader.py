"""Read a Burnpack file's header and CBOR metadata, never its tensor data.

Judged against burn's own reader (``burn-pack/src/reader.rs``): what it refuses (wrong magic,
a newer version, metadata over 100 MB, more than 100,000 tensors, a tensor over 10 GiB, nesting
over 128) is refused here with one line. Stricter, because nothing hides in a file this tool
calls valid: every tensor starts on its 256-byte boundary, no two overlap, a tensor's bytes are
exactly its shape times its dtype, and the file ends where the last tensor does.
"""

from __future__ import annotations

import functools
import io
import math
import operator
import os
import struct

from ...collector_pause import collector_paused
from ...errors import CheckpointError
from ...layout import _BITS, Header, TensorInfo
from ...regular_file import open_regular
from ...wording import _q, byte_count
from .dtypes import _BY_NAME, is_burn_quantized, our_dtype
from .facts import BurnpackFacts
from .fast import fast_tensors
from .qfloat import BurnQuant, QFloatError, parse_qfloat
from .spec import (
    ALIGNMENT,
    FORMAT_NAME,
    HEADER_SIZE,
    MAGIC,
    MAX_CBOR_DEPTH,
    MAX_FILE_SIZE,
    MAX_METADATA_SIZE,
    MAX_TENSOR_BYTES,
    MAX_TENSORS,
    VERSION,
    aligned,
    data_section_start,
)
from .tensor import BurnQuantInfo

_U64_MAX = 2**64 - 1
_MAX_DIMS = 64  # no framework makes tensors of more (torch stops at 64)
_DATA_ORDER = operator.attrgetter("data_offsets")
_SCALAR_TYPES = {"Int": int, "UInt": int, "Float": float, "Bool": bool}


def read_burnpack(path: str | os.PathLike[str]) -> Header:
    """Read and validate one ``.bpk`` file's header; raise CheckpointError if it is invalid."""
    path = os.fspath(path)
    with open_regular(path) as f:
        try:
            size = os.fstat(f.fileno()).st_size
            head = f.read(HEADER_SIZE)
            if len(head) < HEADER_SIZE:
                raise CheckpointError(
                    path, f"file is too short to be Burnpack ({size} bytes; the header is 10)"
                )
            magic, version, meta_size = head[:4], *struct.unpack("<HI", head[4:])
            if magic != MAGIC:
                raise CheckpointError(
                    path, f"not a Burnpack file: it starts with {magic!r}, not the magic b'NRUB'"
                )
            _check_header(path, version, meta_size, size)
            raw = f.read(meta_size)
        except OSError as e:
            raise CheckpointError(path, f"cannot read: {e.strerror or e}") from None
    if len(raw) != meta_size:
        raise CheckpointError(path, "file changed while reading its metadata")
    data_start = data_section_start(meta_size)
    with collector_paused():  # a million small acyclic objects for 100k tensors
        doc = _decode(path, raw)
        del raw
        tensors, by_name, facts = _tensors(path, doc, version)
        metadata = _string_map(path, doc.get("metadata", {}), "metadata")
        # freed while paused: left to the collector, the decoded maps cost it a full pass (75 ms)
        del doc
    _check_layout(path, tensors, data_start, size)
    return Header(
        path,
        tensors,
        metadata or None,
        data_start,
        size,
        FORMAT_NAME,
        by_name=by_name,
        facts=facts,
    )


def _check_header(path: str, version: int, meta_size: int, size: int) -> None:
    if version > VERSION:
        raise CheckpointError(
            path, f"Burnpack version {version}; burn (and this tool) read version {VERSION}"
        )
    if size > MAX_FILE_SIZE:
        raise CheckpointError(path, f"file is {size:,} bytes; burn refuses files over 100 GB")
    if meta_size > MAX_METADATA_SIZE:
        raise CheckpointError(
            path, f"metadata size {meta_size:,} bytes is over burn's limit of 100 MB"
        )
    if HEADER_SIZE + meta_size > size:
        raise CheckpointError(
            path,
            f"metadata size {meta_size:,} bytes runs past the end of the file ({size:,} bytes): "
            "truncated or not Burnpack",
        )


def _decode(path: str, raw: bytes) -> dict:
    import cbor2  # 2 ms; only Burnpack files need it

    stream = io.BytesIO(raw)
    try:
        doc = cbor2.CBORDecoder(
            stream,
            read_size=1 << 16,
            max_depth=MAX_CBOR_DEPTH - 1,  # burn's 128 containers, the top map included
            allow_duplicate_keys=False,  # nothing hidden behind a later key of the same name
            strict_hashable_types=True,  # keys are strings: no crafted hash collisions
            allow_indefinite=False,  # burn writes definite lengths, and reads names only so
            tag_hook=_refuse_tag,  # tags cbor2 does not know
            semantic_decoders=_no_tags(),  # and those it does (shared and string references…)
        ).decode()
    except Exception as e:  # cbor2 raises its own errors, ValueError, OverflowError…
        tag = e.__cause__ if isinstance(e.__cause__, _Tagged) else e
        if isinstance(tag, _Tagged):
            raise CheckpointError(
                path,
                f"metadata holds CBOR tag {tag.tag} (a shared or string reference, a date, a "
                "bignum…); burn's writer never writes tags, and this tool reads none",
            ) from None
        if "nesting depth" in str(e):
            raise CheckpointError(
                path, "metadata nests deeper than burn's limit of 128 containers"
            ) from None
        raise CheckpointError(path, f"metadata is not valid CBOR: {_first_line(e)}") from None
    if stream.tell() != len(raw):
        raise CheckpointError(
            path,
            f"{len(raw) - stream.tell():,} bytes of the metadata follow its CBOR value "
            "(the header's metadata size is wrong)",
        )
    if not isinstance(doc, dict) or not isinstance(doc.get("tensors"), dict):
        raise CheckpointError(path, "metadata is not a map with a 'tensors' map")
    return doc


class _Tagged(ValueError):
    def __init__(self, tag: int) -> None:
        super().__init__(f"CBOR tag {tag}")
        self.tag = tag


def _refuse_tag(*args: object) -> object:
    """cbor2's tag hook (decoder, tag) — the tag is a CBORTag with its number."""
    for a in args:
        number = getattr(a, "tag", None)
        if isinstance(number, int) and not isinstance(number, bool):
            raise _Tagged(number)
    raise _Tagged(-1)


_TAG_DECODERS: dict | None = None


def _no_tags() -> dict:
    """Every tag cbor2 decodes by itself (0–1023 and 55799 cover them all: dates, bignums,
    decimals, shared and string references, sets, UUIDs, regexes…), refused instead; any other
    tag reaches the tag hook, which refuses it too."""
    global _TAG_DECODERS
    if _TAG_DECODERS is None:
        _TAG_DECODERS = {t: functools.partial(_refuse_number, t) for t in (*range(1024), 55799)}
    return _TAG_DECODERS


def _refuse_number(tag: int, *_args: object) -> object:
    raise _Tagged(tag)


def _first_line(e: BaseException) -> str:
    return (str(e).splitlines() or [type(e).__name__])[0][:200]


def _tensors(
    path: str, doc: dict, version: int
) -> tuple[list[TensorInfo], dict[str, TensorInfo], BurnpackFacts]:
    entries = doc["tensors"]
    if len(entries) > MAX_TENSORS:
        raise CheckpointError(
            path, f"{len(entries):,} tensors; burn refuses files of more than 100,000"
        )
    facts = BurnpackFacts(version)
    facts.scalars = _scalars(path, doc.get("scalars", {}))
    # a newer burn's fields: ignored, as burn ignores fields it does not know (and not written
    # back: their values are not kept); tags, cycles and deep nesting were refused at decoding
    facts.extra_fields = [k for k in doc if k not in ("tensors", "metadata", "scalars")]
    fast = fast_tensors(path, entries)
    if fast is not None:
        facts.param_ids = fast[2]
        return fast[0], fast[1], facts
    tensors = []
    by_name = _BY_NAME
    for name, d in entries.items():
        if type(name) is not str or type(d) is not dict:
            raise CheckpointError(path, f"tensor {_q(name)}: not a name with a descriptor map")
        value, shape, offsets = d.get("dtype"), d.get("shape"), d.get("data_offsets")
        quant = _qfloat(path, name, value) if is_burn_quantized(value) else None
        dtype = "U8" if quant else by_name.get(value) if type(value) is str else our_dtype(value)
        if dtype is None:
            raise CheckpointError(path, f"tensor {_q(name)}: unknown burn dtype {_q(value)}")
        if type(shape) is not list or not all(type(n) is int and 0 <= n <= _U64_MAX for n in shape):
            raise CheckpointError(path, f"tensor {_q(name)}: shape is not a list of sizes")
        if (
            type(offsets) is not list
            or len(offsets) != 2
            or not all(type(n) is int and 0 <= n <= _U64_MAX for n in offsets)
        ):
            raise CheckpointError(path, f"tensor {_q(name)}: data_offsets is not [start, end]")
        if "param_id" in d:
            pid = d["param_id"]
            if pid is not None:
                if type(pid) is not int or not 0 <= pid <= _U64_MAX:
                    raise CheckpointError(path, f"tensor {_q(name)}: param_id is not a u64")
                facts.param_ids[name] = pid
        if type(value) is not str or value != dtype:
            facts.burn_dtypes[name] = value
        if quant is not None:
            tensors.append(_quantized(path, name, quant, tuple(shape), (offsets[0], offsets[1])))
            continue
        tensors.append(
            TensorInfo(
                dtype_name=dtype,
                shape=tuple(shape),
                data_offsets=(offsets[0], offsets[1]),
                name=name,
                file=path,
            )
        )
    tensors.sort(key=_DATA_ORDER)  # the data's order: the module's, as burn wrote it
    return tensors, {t.name: t for t in tensors}, facts


def _qfloat(path: str, name: str, value: object) -> BurnQuant:
    if not isinstance(value, dict) or len(value) != 1:
        raise CheckpointError(path, f"tensor {_q(name)}: unknown burn dtype {_q(value)}")
    try:
        return parse_qfloat(value["QFloat"])
    except QFloatError as e:
        raise CheckpointError(path, f"tensor {_q(name)} is burn-quantized (QFloat): {e}") from None


def _quantized(
    path: str, name: str, quant: BurnQuant, shape: tuple[int, ...], offsets: tuple[int, int]
) -> BurnQuantInfo:
    """The stored bytes as U8, checked against burn's ``quantized_data_len`` for the shape."""
    start, end = offsets
    t = BurnQuantInfo(
        dtype_name="U8",
        shape=(max(0, end - start),),
        data_offsets=offsets,
        name=name,
        file=path,
        logical=shape,
        quant=quant,
    )
    _numel(path, TensorInfo(shape=shape, name=name))  # dims and u64 overflow, as for others
    try:
        quant.check_shape(shape)
    except QFloatError as e:
        raise CheckpointError(path, f"tensor {_q(name)} ({quant.describe()}): {e}") from None
    need = quant.data_len(shape)
    if end >= start and need != end - start:
        raise CheckpointError(
            path,
            f"tensor {_q(name)}: shape {list(shape)} × {quant.describe()} needs {byte_count(need)} "
            f"(values and scales) but data_offsets give {end - start:,}",
        )
    return t


def _scalars(path: str, value: object) -> dict[str, dict]:
    if not isinstance(value, dict):
        raise CheckpointError(path, "'scalars' is not a map")
    for key, v in value.items():
        ok = type(key) is str and isinstance(v, dict) and len(v) == 1
        if ok:
            ((kind, x),) = v.items()
            want = _SCALAR_TYPES.get(kind)
            ok = want is not None and type(x) is want
            if ok and kind in ("Int", "UInt"):
                ok = (
                    (0 if kind == "UInt" else -(2**63))
                    <= x
                    <= (_U64_MAX if kind == "UInt" else 2**63 - 1)
                )
        if not ok:
            raise CheckpointError(path, f"scalar {_q(key)} is not an Int, UInt, Float or Bool")
    return value


def _string_map(path: str, value: object, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        type(k) is str and type(v) is str for k, v in value.items()
    ):
        raise CheckpointError(path, f"'{what}' is not a map of strings")
    return value


def _numel(path: str, t: TensorInfo) -> int:
    """The element count, refusing a shape whose running product passes u64 (burn multiplies
    in usize) or that has more than 64 dimensions: no product is ever a huge integer."""
    if len(t.shape) > _MAX_DIMS:
        raise CheckpointError(path, f"tensor {_q(t.name)}: {len(t.shape):,} dimensions")
    n = math.prod(t.shape)  # bounded: at most 64 factors below 2**64
    if n <= _U64_MAX and (n or 0 not in t.shape):
        return n
    n = 1  # a zero after an overflow: the running product, as burn's, overflows first
    for d in t.shape:
        n *= d
        if n > _U64_MAX:
            raise CheckpointError(path, f"tensor {_q(t.name)}: its shape overflows u64")
    return n


def _check_layout(path: str, tensors: list[TensorInfo], data_start: int, size: int) -> None:
    """In data order: each tensor's bytes exactly its shape times its dtype, on its 256-byte
    boundary right after the one before (burn's writer), none overlapping, and the file ending
    where the last one does. One loop for both parsing paths (100k tensors: ~25 ms); the first
    tensor that breaks a rule is judged again by :func:`_refuse`, which words why."""
    pos = 0
    bits_of, prod = _BITS, math.prod
    for t in tensors:
        start, end = t.data_offsets
        shape = t.shape
        numel = prod(shape) if len(shape) <= _MAX_DIMS else -1
        if (
            not 0 < numel <= _U64_MAX
            or not 0 <= end - start <= MAX_TENSOR_BYTES
            or numel * bits_of[t.dtype_name] != (end - start) * 8
            or start % ALIGNMENT
            or not pos <= start <= -(-pos // ALIGNMENT) * ALIGNMENT
        ):
            _refuse(path, t, pos)
        pos = end
    _check_end(path, data_start + pos, size)


def _refuse(path: str, t: TensorInfo, pos: int) -> None:
    """Raise for the first rule of :func:`_check_layout` that ``t`` breaks, in the order the
    messages are tested; return if it breaks none (an empty tensor: no element, no byte)."""
    start, end = t.data_offsets
    q = _q(t.name)
    if end < start:
        raise CheckpointError(path, f"tensor {q}: data ends ({end}) before it starts ({start})")
    if end - start > MAX_TENSOR_BYTES:
        raise CheckpointError(
            path, f"tensor {q}: {end - start:,} bytes; burn refuses tensors over 10 GiB"
        )
    bits = _BITS[t.dtype_name]
    numel = _numel(path, t)
    if numel * bits != (end - start) * 8:
        raise CheckpointError(
            path,
            f"tensor {q}: shape {list(t.shape)} × {t.dtype_name} needs "
            f"{byte_count(numel * bits // 8)} but data_offsets give {end - start:,}",
        )
    if start % ALIGNMENT:
        raise CheckpointError(
            path, f"tensor {q}: data starts at byte {start}, not on a 256-byte boundary"
        )
    if start < pos:
        raise CheckpointError(
            path,
            f"tensor {q}: data starts at byte {start}, overlapping the tensor before it (which "
            f"ends at {pos})",
        )
    if start > aligned(pos):
        raise CheckpointError(
            path,
            f"tensor {q}: data starts at byte {start}, leaving {start - aligned(pos):,} bytes "
            f"after byte {aligned(pos)} that no tensor describes",
        )


def _check_end(path: str, end: int, size: int) -> None:
    """The last tensor ends where the file does."""
    if end > size:
        raise CheckpointError(
            path,
            f"tensor data ends at byte {end:,} but the file holds only {size:,} bytes: truncated",
        )
    if end < size:
        raise CheckpointError(
            path,
            f"{size - end:,} bytes after the last tensor are not described by the metadata "
            "(trailing data)",
        )
