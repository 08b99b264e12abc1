"""Read and validate one safetensors header, accepting and rejecting exactly as the reference loader.

Only the 8-byte length and the JSON header are read: opening a 100 GB file costs the same as a
1 MB one. The rules mirror ``safetensors`` (Rust) ``Metadata::validate``; every rejection names the
problem in words a person understands.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import stat
import struct
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import msgspec

from .dtypes import DTYPES, DType
from .errors import CheckpointError, path_problem

MAX_HEADER_SIZE = 100_000_000  # the reference loader's limit
_U64_MAX = 2**64 - 1
_BITS = {name: d.bits for name, d in DTYPES.items()}


_DTYPE_NAMES = Literal[
    "BOOL",
    "F4",
    "F6_E2M3",
    "F6_E3M2",
    "U8",
    "I8",
    "F8_E5M2",
    "F8_E4M3",
    "F8_E8M0",
    "F8_E4M3FNUZ",
    "F8_E5M2FNUZ",
    "I16",
    "U16",
    "F16",
    "BF16",
    "I32",
    "U32",
    "F32",
    "C64",
    "F64",
    "I64",
    "U64",
]
_UInt = Annotated[int, msgspec.Meta(ge=0)]


class TensorInfo(msgspec.Struct, gc=False, omit_defaults=True):
    """Where one tensor lives: ``start``/``end`` are offsets inside the data section of ``file``.

    A msgspec Struct so a 200k-tensor header decodes straight into these, validated in C.
    """

    # Optional only so that decoding never stops at a missing field: the fast path then hands
    # the header to the careful parser, which names the problem. Every TensorInfo built has all.
    dtype_name: _DTYPE_NAMES | None = msgspec.field(default=None, name="dtype")
    shape: tuple[_UInt, ...] | None = None
    data_offsets: tuple[_UInt, _UInt] | None = None
    name: str = ""
    file: str = ""

    @property
    def dtype(self) -> DType:
        return DTYPES[self.dtype_name]

    @property
    def start(self) -> int:
        return self.data_offsets[0]

    @property
    def end(self) -> int:
        return self.data_offsets[1]

    @property
    def nbytes(self) -> int:
        return self.data_offsets[1] - self.data_offsets[0]

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def __repr__(self) -> str:
        return f"TensorInfo({self.name!r}, {self.dtype_name}, {list(self.shape)}, {self.file!r})"


@dataclass
class Header:
    """A validated header of one file. ``tensors`` keep the order they have in the JSON text."""

    path: str
    tensors: list[TensorInfo]
    metadata: dict[str, str] | None
    data_start: int  # absolute offset of byte 0 of the data section
    file_size: int
    # name -> tensor, when the parser built one anyway (saves a 200k-entry pass in Checkpoint)
    by_name: dict[str, TensorInfo] | None = field(default=None, repr=False, compare=False)


_NEG_ZERO_INT = re.compile(r"-0(?![0-9.eE])")
_FIELDS = frozenset(("dtype", "shape", "data_offsets"))
_MAX_DEPTH = 127  # serde_json's recursion limit, as the reference loader meets it
_F64_MAX = 1.7976931348623157e308


class _NeedRepeats(Exception):
    """The fast parse met something whose meaning depends on repeated JSON keys."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in JSON")


def _parse_float(s: str) -> float:
    v = float(s)
    if v in (_INF, -_INF):
        raise ValueError(f"number {_clip(s, 30)} is out of range")
    return v


_INF = float("inf")


def _parse_json(
    text: str, track_repeats: bool
) -> tuple[Any, dict[int, tuple[Any, set[str], list[tuple[str, Any]]]] | None]:
    """Parse like serde would; with ``track_repeats``, also return, per dict id, the keys it repeated.

    serde rejects a repeated struct field (``dtype`` twice in one tensor, ``__metadata__`` twice)
    but lets a repeated map key win last, so repeats are recorded and judged by where they are.
    Each recorded dict is kept alive in the table so its id cannot be reused by another dict.
    Tracking costs a Python call per object, so the caller first parses without it and comes back
    only when the text could hold a repeated field.
    """
    kwargs: dict[str, Any] = {"parse_constant": _reject_constant, "parse_float": _parse_float}
    repeats: dict[int, tuple[Any, set[str], list[tuple[str, Any]]]] | None = None
    if track_repeats:
        repeats = {}
        table = repeats

        def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            d = dict(pairs)
            if len(d) != len(pairs):
                seen: set[str] = set()
                rep: set[str] = set()
                for k, _ in pairs:
                    if k in seen:
                        rep.add(k)
                    seen.add(k)
                # values a later repeat replaced: serde still parsed (and judged) them
                dropped = [(k, v) for k, v in pairs if k in rep and d[k] is not v]
                table[id(d)] = (d, rep, dropped)
            return d

        kwargs["object_pairs_hook"] = hook
    if "-0" in text and _NEG_ZERO_INT.search(text):
        # JSON "-0" is a float to serde (so not a valid dimension), an int to Python.
        kwargs["parse_int"] = lambda s: (
            float(s) if s.startswith("-") and s.strip("-0") == "" else int(s)
        )
    obj = json.loads(text, **kwargs)
    dropped = [v for _, _, gone in (repeats or {}).values() for _, v in gone]
    if "\\u" in text and (_has_lone_surrogate(obj) or _has_lone_surrogate(dropped)):
        raise ValueError("a \\u escape encodes a lone surrogate, which is not valid UTF-8")
    return obj, repeats


def _could_repeat_fields(text: str, obj: dict[str, Any]) -> bool:
    """True unless the text provably repeats no key anywhere.

    Every key of every object is followed by one colon; colons inside strings are counted from
    the parsed strings. A text with more colons than that repeated a key, whose earlier value
    Python's dict dropped without judging it. A backslash-u escape can hide a colon or spell a
    key, so it takes the exact path too.
    """
    if "\\u" in text:
        return True
    expected = 0
    stack: list[Any] = [obj]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is dict:
            expected += len(x)
            for k, v in x.items():
                if ":" in k:
                    expected += k.count(":")
                stack.append(v)
        elif t is list:
            stack.extend(x)
        elif t is str and ":" in x:
            expected += x.count(":")
    return text.count(":") != expected


def _has_lone_surrogate(obj: Any) -> bool:
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            try:
                x.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return False


def _extra_field_problem(value: Any) -> str | None:
    """What serde would reject in a tensor's unknown field (it parses and then ignores it).

    The value sits at nesting depth 3 (file object, tensor object, value); serde gives up past
    depth 127, and numbers it turns into f64 must stay finite.
    """
    stack = [(value, 3)]
    while stack:
        x, depth = stack.pop()
        t = type(x)
        if t is dict or t is list:
            if depth > _MAX_DEPTH:
                return f"nested more than {_MAX_DEPTH} levels deep"
            stack.extend((v, depth + 1) for v in (x.values() if t is dict else x))
        elif t is int and not -_F64_MAX <= x <= _F64_MAX:
            return "holds a number too large for a 64-bit float"
    return None


def sniff_foreign_format(head: bytes) -> str | None:
    """Name a well-known non-safetensors format from its first bytes, so the error says what it is.

    Only meaningful for a file already found not to be safetensors: a valid header length can
    begin with these bytes too (640 is ``80 02 00 ..``, the start of a pickle).
    """
    if head.startswith(b"PK\x03\x04"):
        return "a zip archive (a PyTorch .pt/.bin pickle checkpoint saved by torch.save?), not safetensors"
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return "a Python pickle (a legacy PyTorch .pt/.bin checkpoint?), not safetensors"
    if head.startswith(b"GGUF"):
        return "a GGUF file (llama.cpp), not safetensors"
    if head.startswith(b"\x89HDF"):
        return "an HDF5 file (Keras .h5?), not safetensors"
    if head.startswith(b"\x93NUMPY"):
        return "a NumPy .npy file, not safetensors"
    if len(head) >= 8 and all(32 <= b < 127 or b in (9, 10, 13) for b in head[:8]):
        # a real header length is < 2**27, so its bytes 4..7 are zero, never printable
        start = head.decode("ascii", "replace").lstrip()
        if start.startswith(("{", "[")):
            return "a JSON text file (an index.json or config?), not safetensors"
        return f"a text file (it starts with {head[:8].decode('ascii')!r}), not safetensors"
    return None


def _zip_members(path: str) -> list[str]:
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            return zf.namelist()[:100_000]
    except Exception:  # zipfile raises assorted errors on crafted archives; sniffing must not
        return []


def _foreign_reason(path: str, head: bytes) -> str | None:
    what = sniff_foreign_format(head)
    if what and head.startswith(b"PK\x03\x04"):
        members = _zip_members(path)
        if any(m.endswith("constants.pkl") or "/code/" in m for m in members):
            return (
                "this is a TorchScript archive (torch.jit.save: code plus weights), not a checkpoint "
                "of tensors; load it with torch.jit.load and save its state_dict() with safetensors"
            )
        if any(m.endswith("data.pkl") for m in members):
            return "this is a PyTorch pickle checkpoint (torch.save zip with data.pkl), not safetensors; convert it first (torch.load, then safetensors.torch.save_file)"
        return "this is a zip archive, not safetensors"
    if what and "pickle" in what:
        return "this is a PyTorch pickle checkpoint (legacy torch.save format), not safetensors; convert it first (torch.load, then safetensors.torch.save_file)"
    if what is None and (path.lower().endswith(".onnx") or _looks_like_onnx(head)):
        return "this is an ONNX model (protobuf), not safetensors"
    return f"this is {what}" if what else None


def _looks_like_onnx(head: bytes) -> bool:
    """ONNX ModelProto starts with ir_version (field 1, varint), then a string field 2..8."""
    return (
        len(head) >= 4
        and head[0] == 0x08
        and head[1] < 0x80
        and head[2] in (0x12, 0x1A, 0x22, 0x2A, 0x32, 0x3A, 0x42)
    )


def read_header(path: str | os.PathLike[str]) -> Header:
    """Read and validate the header of one ``.safetensors`` file; raise CheckpointError if invalid."""
    path = os.fspath(path)
    try:
        return _read_header(path)
    except CheckpointError as e:
        # A file that is not safetensors: say what it is instead, when its first bytes tell.
        try:
            with _open_regular(path) as f:  # never blocks: a FIFO is refused, not opened
                head = f.read(16)
        except (OSError, CheckpointError):
            raise e from None
        foreign = _foreign_reason(path, head) if len(head) >= 4 else None
        if foreign:
            raise CheckpointError(path, foreign) from None
        raise


def _open_regular(path: str) -> Any:
    """Open ``path`` for reading without blocking on a FIFO; refuse anything but a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except IsADirectoryError:
        raise CheckpointError(path, "is a folder, not a .safetensors file") from None
    except FileNotFoundError as e:
        problem = path_problem(path, e)
        raise CheckpointError(
            path, "no such file" if problem == "no such file or folder" else problem
        ) from None
    except OSError as e:
        problem = path_problem(path, e)
        if problem == "is a socket, not a file":
            problem = "is a socket, not a .safetensors file"
        elif not problem.startswith(("is ", "permission")):
            problem = f"cannot open: {problem}"
        raise CheckpointError(path, problem) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise CheckpointError(path, "is a folder, not a .safetensors file")
        if not stat.S_ISREG(st.st_mode):
            kind = (
                "a named pipe (FIFO)"
                if stat.S_ISFIFO(st.st_mode)
                else "a device"
                if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a socket"
                if stat.S_ISSOCK(st.st_mode)
                else "not a regular file"
            )
            raise CheckpointError(path, f"is {kind}, not a .safetensors file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _read_header(path: str) -> Header:
    with _open_regular(path) as f:
        try:
            size = os.fstat(f.fileno()).st_size
            head = f.read(8)
            if len(head) < 8:
                raise CheckpointError(
                    path,
                    f"file is too short to be safetensors ({size} bytes; needs at least 8 for the header length)",
                )
            (n,) = struct.unpack("<Q", head)
            if n > MAX_HEADER_SIZE:
                raise CheckpointError(
                    path,
                    f"header length {n:,} bytes is over the 100 MB limit safetensors allows (corrupt or not safetensors)",
                )
            if 8 + n > size:
                raise CheckpointError(
                    path,
                    f"header length {n:,} bytes runs past the end of the file ({size:,} bytes): truncated or not safetensors",
                )
            raw = f.read(n)
        except OSError as e:
            raise CheckpointError(path, f"cannot read: {e.strerror or e}") from None
    if len(raw) != n:
        raise CheckpointError(path, "file changed while reading its header")
    from .header_fast import parse_fast  # imports this module: import on first use

    try:
        fast = parse_fast(path, raw, data_start=8 + n, file_size=size)
    except Exception:  # e.g. msgspec's RecursionError on deep nesting: the careful path judges
        fast = None
    if fast is not None:
        return fast
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CheckpointError(
            path, f"header is not valid UTF-8 (bad byte at header offset {e.start})"
        ) from None
    del raw
    return parse_header_text(path, text, data_start=8 + n, file_size=size)


def parse_header_text(path: str, text: str, *, data_start: int, file_size: int) -> Header:
    """Validate decoded header JSON against a file of ``file_size`` bytes."""
    obj, _ = _load(path, text, track_repeats=False)
    if type(obj) is not dict or not _could_repeat_fields(text, obj):
        try:
            return _build(path, text, obj, None, data_start, file_size)
        except _NeedRepeats:
            pass
    obj, repeats = _load(path, text, track_repeats=True)
    return _build(path, text, obj, repeats or {}, data_start, file_size)


def _load(
    path: str, text: str, *, track_repeats: bool
) -> tuple[Any, dict[int, tuple[Any, set[str], list[tuple[str, Any]]]] | None]:
    try:
        return _parse_json(text, track_repeats)
    except RecursionError:
        raise CheckpointError(path, "header JSON is nested too deeply") from None
    except ValueError as e:
        if isinstance(e, json.JSONDecodeError):
            msg = f"{e.msg.removesuffix(' at')} at character {e.pos}"
        elif "Exceeds the limit" in str(e):
            msg = "a number has too many digits"
        else:
            msg = str(e)
        raise CheckpointError(path, f"header is not valid JSON ({msg})") from None


def _build(
    path: str,
    text: str,
    obj: Any,
    repeats: dict[int, tuple[Any, set[str], list[tuple[str, Any]]]] | None,
    data_start: int,
    file_size: int,
) -> Header:
    if type(obj) is not dict:
        raise CheckpointError(
            path, f"header JSON must be an object of tensors, got {_json_type(obj)}"
        )
    if repeats and "__metadata__" in repeats.get(id(obj), ((), (), ()))[1]:
        raise CheckpointError(path, "header JSON has __metadata__ twice")
    metadata = obj.pop("__metadata__", None)
    if metadata is not None:
        if type(metadata) is not dict:
            raise CheckpointError(path, "__metadata__ must be an object of string to string")
        for k, v in metadata.items():
            if type(v) is not str:
                raise CheckpointError(
                    path, f"__metadata__ value for {_q(k)} must be a string, got {_json_type(v)}"
                )

    # a repeated tensor name keeps its last entry, but serde judged the earlier ones first
    for name, info in repeats.get(id(obj), ((), (), ()))[2] if repeats else ():
        if name != "__metadata__":
            _tensor_entry(path, name, info, repeats)
    tensors = [_tensor_entry(path, name, info, repeats) for name, info in obj.items()]
    _validate_layout(path, tensors, data_len=file_size - data_start)
    return Header(path, tensors, metadata, data_start, file_size)


def _tensor_entry(
    path: str,
    name: str,
    info: Any,
    repeats: dict[int, tuple[Any, set[str], list[tuple[str, Any]]]] | None,
) -> TensorInfo:
    """One validated tensor entry, or the reason it is refused."""
    ti = type(info)
    if ti is dict:
        if repeats and id(info) in repeats:
            field = sorted(repeats[id(info)][1] & _FIELDS)
            if field:
                raise CheckpointError(path, f"tensor {_q(name)}: field {field[0]!r} appears twice")
        try:
            dtype_name = info["dtype"]
            shape = info["shape"]
            offsets = info["data_offsets"]
        except KeyError as e:
            raise CheckpointError(path, f"tensor {_q(name)}: missing field {e.args[0]!r}") from None
        if len(info) != 3:
            for key, value in info.items():
                if key not in _FIELDS:
                    problem = _extra_field_problem(value)
                    if problem:
                        raise CheckpointError(
                            path, f"tensor {_q(name)}: extra field {_q(key)} {problem}"
                        )
    elif ti is list and len(info) == 3:
        # serde also reads a struct from a JSON array of its fields, in declaration order
        dtype_name, shape, offsets = info
    else:
        what = f"a list of {len(info)} items" if ti is list else _json_type(info)
        raise CheckpointError(
            path,
            f"tensor {_q(name)}: entry must be an object with dtype, shape and data_offsets, got {what}",
        )
    dtype = DTYPES.get(dtype_name) if type(dtype_name) is str else None
    if dtype is None:
        dtype = _dtype_from_map(path, name, dtype_name, repeats)
    if type(shape) is not list:
        _bad_shape(path, name, shape)
    for d in shape:
        if type(d) is not int or d < 0 or d > _U64_MAX:
            _bad_shape(path, name, shape)
    if type(offsets) is not list or len(offsets) != 2:
        _bad_offsets_field(path, name, offsets)
    start, end = offsets
    if (
        type(start) is not int
        or type(end) is not int
        or start < 0
        or end < 0
        or start > _U64_MAX
        or end > _U64_MAX
    ):
        _bad_offsets_field(path, name, offsets)
    return TensorInfo(
        dtype_name=dtype.name,
        shape=tuple(shape),
        data_offsets=(start, end),
        name=name,
        file=path,
    )


def _dtype_from_map(
    path: str,
    name: str,
    value: Any,
    repeats: dict[int, tuple[Any, set[str], list[tuple[str, Any]]]] | None,
) -> DType:
    """serde also reads a unit enum variant from a one-entry map, ``{"F32": null}``."""
    if type(value) is dict and len(value) == 1:
        if repeats is None:
            raise _NeedRepeats  # {"F32": null, "F32": null} collapses to one entry in Python
        ((key, inner),) = value.items()
        if inner is None and key in DTYPES and id(value) not in repeats:
            return DTYPES[key]
    hint = ""
    if isinstance(value, str) and value.upper() in DTYPES:
        hint = f" (dtype names are upper case: {value.upper()})"
    raise CheckpointError(path, f"tensor {_q(name)}: unknown dtype {_dump(value)}{hint}")


def _bad_shape(path: str, name: str, shape: Any) -> None:
    raise CheckpointError(
        path,
        f"tensor {_q(name)}: shape must be a list of non-negative integers, got {_dump(shape)}",
    )


def _bad_offsets_field(path: str, name: str, offsets: Any) -> None:
    raise CheckpointError(
        path,
        f"tensor {_q(name)}: data_offsets must be exactly two non-negative integers, got {_dump(offsets)}",
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _q(name: str) -> str:
    """A tensor or key name for a message: quoted, and clipped so one line stays one line."""
    return _clip(repr(name), 80)


def _dump(v: Any) -> str:
    try:
        text = json.dumps(v, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        text = _json_type(v)
    return _clip(text.replace("\n", "\\n"), 80)


def _json_type(v: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(v), type(v).__name__)


def _validate_layout(path: str, tensors: list[TensorInfo], data_len: int) -> None:
    """Offsets contiguous from 0, sizes matching shape × dtype, the data section covered exactly.

    One tight loop: this runs on every open, 200k times for a big header.
    """
    ordered = tensors
    offsets = [t.data_offsets for t in tensors]
    if not all(a <= b for a, b in itertools.pairwise(offsets)):
        ordered = sorted(tensors, key=lambda t: t.data_offsets)
    pos = 0
    bits_of = _BITS
    prod = math.prod
    for t in ordered:
        start, end = t.data_offsets
        if start != pos or end < start:
            _bad_offsets(path, t, pos)
        pos = end
        numel = prod(t.shape)
        bits = numel * bits_of[t.dtype_name]
        if bits != (end - start) * 8 or (numel == 0 and _prefix_overflows(t.shape)):
            _bad_size(path, t, numel)
    if pos != data_len:
        if pos > data_len:
            raise CheckpointError(
                path,
                f"tensor data ends at byte {pos:,} but the file holds only {data_len:,} data bytes: truncated",
            )
        raise CheckpointError(
            path,
            f"{data_len - pos:,} bytes after the last tensor are not described by the header (trailing data)",
        )


def _prefix_overflows(shape: tuple[int, ...]) -> bool:
    """The reference multiplies dimensions left to right in u64: [2**63, 2, 0] overflows at 2."""
    n = 1
    for d in shape:
        n *= d
        if n > _U64_MAX:
            return True
    return False


def _bad_offsets(path: str, t: TensorInfo, pos: int) -> None:
    start, end = t.data_offsets
    if end < start:
        why = f"ends ({end}) before it starts ({start})"
    elif start < pos:
        why = f"starts at byte {start}, overlapping the previous tensor (which ends at {pos})"
    else:
        why = f"starts at byte {start}, leaving a gap after byte {pos}"
    raise CheckpointError(path, f"tensor {_q(t.name)}: data_offsets {why}")


def _bad_size(path: str, t: TensorInfo, numel: int) -> None:
    """Why shape × dtype does not match the byte range, in the reference loader's order of checks."""
    numel_checked = 1
    for d in t.shape:
        numel_checked *= d
        if numel_checked > _U64_MAX:
            raise CheckpointError(
                path, f"tensor {_q(t.name)}: shape {_dump(list(t.shape))} overflows"
            )
    bits = numel * t.dtype.bits
    if bits > _U64_MAX:
        raise CheckpointError(path, f"tensor {_q(t.name)}: shape {_dump(list(t.shape))} overflows")
    if bits % 8:
        raise CheckpointError(
            path,
            f"tensor {_q(t.name)}: {numel} × {t.dtype.bits}-bit {t.dtype.name} values do not fill whole bytes",
        )
    raise CheckpointError(
        path,
        f"tensor {_q(t.name)}: shape {list(t.shape)} × {t.dtype.name} needs {bits // 8:,} bytes "
        f"but data_offsets give {t.end - t.start:,}",
    )
