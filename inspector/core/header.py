"""Read and validate one safetensors header, accepting and rejecting exactly as the reference loader.

Only the 8-byte length and the JSON header are read: opening a 100 GB file costs the same as a
1 MB one. The rules mirror ``safetensors`` (Rust) ``Metadata::validate``; every rejection names the
problem in words a person understands.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass, field
from typing import Any

from .dtypes import DTYPES, DType
from .errors import CheckpointError

MAX_HEADER_SIZE = 100_000_000  # the reference loader's limit
_U64_MAX = 2**64 - 1


class TensorInfo:
    """Where one tensor lives: ``start``/``end`` are offsets inside the data section of ``file``."""

    __slots__ = ("dtype", "end", "file", "name", "shape", "start")

    def __init__(
        self, name: str, dtype: DType, shape: tuple[int, ...], start: int, end: int, file: str
    ) -> None:
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.start = start
        self.end = end
        self.file = file

    @property
    def nbytes(self) -> int:
        return self.end - self.start

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __repr__(self) -> str:
        return f"TensorInfo({self.name!r}, {self.dtype.name}, {list(self.shape)}, {self.file!r})"


@dataclass
class Header:
    """A validated header of one file. ``tensors`` keep the order they have in the JSON text."""

    path: str
    tensors: list[TensorInfo]
    metadata: dict[str, str] | None
    data_start: int  # absolute offset of byte 0 of the data section
    file_size: int
    header_text: str = field(repr=False, default="")


def _parse_json(text: str) -> tuple[Any, dict[int, set[str]]]:
    """Parse like serde would; return the object and, per dict id, the keys it repeated.

    serde rejects a repeated struct field (``dtype`` twice in one tensor, ``__metadata__`` twice)
    but lets a repeated map key win last, so repeats are recorded and judged by where they are.
    """
    repeats: dict[int, set[str]] = {}

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        d = dict(pairs)
        if len(d) != len(pairs):
            seen: set[str] = set()
            rep = repeats.setdefault(id(d), set())
            for k, _ in pairs:
                if k in seen:
                    rep.add(k)
                seen.add(k)
        return d

    def reject_constant(name: str) -> Any:
        raise ValueError(f"{name} is not allowed in JSON")

    kwargs: dict[str, Any] = {"object_pairs_hook": hook, "parse_constant": reject_constant}
    if "-0" in text:
        # JSON "-0" is a float to serde (so not a valid dimension), an int to Python.
        kwargs["parse_int"] = lambda s: (
            float(s) if s.startswith("-") and s.strip("-0") == "" else int(s)
        )
    obj = json.loads(text, **kwargs)
    if "\\u" in text and _has_lone_surrogate(obj):
        raise ValueError("a \\u escape encodes a lone surrogate, which is not valid UTF-8")
    return obj, repeats


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


def sniff_foreign_format(head: bytes) -> str | None:
    """Name a well-known non-safetensors format from its first bytes, so the error says what it is."""
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
    return None


def _is_pickle_zip(path: str) -> bool:
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            return any(n.endswith("data.pkl") for n in zf.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return False


def _foreign_reason(path: str, head: bytes) -> str | None:
    what = sniff_foreign_format(head)
    if what and head.startswith(b"PK\x03\x04"):
        if _is_pickle_zip(path):
            return "this is a PyTorch pickle checkpoint (torch.save zip with data.pkl), not safetensors; convert it first (torch.load, then safetensors.torch.save_file)"
        return "this is a zip archive, not safetensors"
    if what and "pickle" in what:
        return "this is a PyTorch pickle checkpoint (legacy torch.save format), not safetensors; convert it first (torch.load, then safetensors.torch.save_file)"
    return f"this is {what}" if what else None


def read_header(path: str | os.PathLike[str]) -> Header:
    """Read and validate the header of one ``.safetensors`` file; raise CheckpointError if invalid."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(8)
            foreign = _foreign_reason(path, head + f.read(8)) if len(head) >= 4 else None
            if foreign:
                raise CheckpointError(path, foreign)
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
            f.seek(8)
            raw = f.read(n)
    except IsADirectoryError:
        raise CheckpointError(path, "is a folder, not a .safetensors file") from None
    except FileNotFoundError:
        raise CheckpointError(path, "no such file") from None
    except PermissionError:
        raise CheckpointError(path, "permission denied") from None
    except OSError as e:
        raise CheckpointError(path, f"cannot read: {e.strerror or e}") from None
    if len(raw) != n:
        raise CheckpointError(path, "file changed while reading its header")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CheckpointError(
            path, f"header is not valid UTF-8 (bad byte at header offset {e.start})"
        ) from None
    return parse_header_text(path, text, data_start=8 + n, file_size=size)


def _check_uint(value: Any) -> bool:
    return type(value) is int and 0 <= value <= _U64_MAX


def parse_header_text(path: str, text: str, *, data_start: int, file_size: int) -> Header:
    """Validate decoded header JSON against a file of ``file_size`` bytes."""
    try:
        obj, repeats = _parse_json(text)
    except RecursionError:
        raise CheckpointError(path, "header JSON is nested too deeply") from None
    except ValueError as e:
        msg = str(e).split(":")[0] if not isinstance(e, json.JSONDecodeError) else e.msg
        pos = f" at character {e.pos}" if isinstance(e, json.JSONDecodeError) else ""
        raise CheckpointError(path, f"header is not valid JSON ({msg}{pos})") from None
    if not isinstance(obj, dict):
        raise CheckpointError(
            path, f"header JSON must be an object of tensors, got {type(obj).__name__}"
        )

    if "__metadata__" in repeats.get(id(obj), ()):
        raise CheckpointError(path, "header JSON has __metadata__ twice")
    metadata = obj.pop("__metadata__", None)
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise CheckpointError(path, "__metadata__ must be an object of string to string")
        for k, v in metadata.items():
            if not isinstance(v, str):
                raise CheckpointError(
                    path, f"__metadata__ value for {k!r} must be a string, got {_json_type(v)}"
                )

    tensors: list[TensorInfo] = []
    append = tensors.append
    for name, info in obj.items():
        if type(info) is not dict:
            raise CheckpointError(
                path, f"tensor {name!r}: entry must be an object, got {_json_type(info)}"
            )
        if repeats and id(info) in repeats:
            field = sorted(repeats[id(info)] & {"dtype", "shape", "data_offsets"})
            if field:
                raise CheckpointError(path, f"tensor {name!r}: field {field[0]!r} appears twice")
        try:
            dtype_name = info["dtype"]
            shape = info["shape"]
            offsets = info["data_offsets"]
        except KeyError as e:
            raise CheckpointError(path, f"tensor {name!r}: missing field {e.args[0]!r}") from None
        dtype = DTYPES.get(dtype_name) if type(dtype_name) is str else None
        if dtype is None:
            hint = ""
            if isinstance(dtype_name, str) and dtype_name.upper() in DTYPES:
                hint = f" (dtype names are upper case: {dtype_name.upper()})"
            raise CheckpointError(path, f"tensor {name!r}: unknown dtype {_dump(dtype_name)}{hint}")
        if type(shape) is not list or not all(_check_uint(d) for d in shape):
            raise CheckpointError(
                path,
                f"tensor {name!r}: shape must be a list of non-negative integers, got {_dump(shape)}",
            )
        if (
            type(offsets) is not list
            or len(offsets) != 2
            or not all(_check_uint(o) for o in offsets)
        ):
            raise CheckpointError(
                path,
                f"tensor {name!r}: data_offsets must be exactly two non-negative integers, got {_dump(offsets)}",
            )
        append(TensorInfo(name, dtype, tuple(shape), offsets[0], offsets[1], path))

    _validate_layout(path, tensors, data_len=file_size - data_start)
    return Header(path, tensors, metadata, data_start, file_size, text)


def _dump(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


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
    """Offsets contiguous from 0, sizes matching shape × dtype, the data section covered exactly."""
    pos = 0
    for t in sorted(tensors, key=lambda t: (t.start, t.end)):
        if t.start != pos or t.end < t.start:
            if t.end < t.start:
                why = f"ends ({t.end}) before it starts ({t.start})"
            elif t.start < pos:
                why = f"starts at byte {t.start}, overlapping the previous tensor (which ends at {pos})"
            else:
                why = f"starts at byte {t.start}, leaving a gap after byte {pos}"
            raise CheckpointError(path, f"tensor {t.name!r}: data_offsets {why}")
        pos = t.end
        numel = 1
        for d in t.shape:
            numel *= d
            if numel > _U64_MAX:
                raise CheckpointError(path, f"tensor {t.name!r}: shape {list(t.shape)} overflows")
        bits = numel * t.dtype.bits
        if bits > _U64_MAX:
            raise CheckpointError(path, f"tensor {t.name!r}: shape {list(t.shape)} overflows")
        if bits % 8:
            raise CheckpointError(
                path,
                f"tensor {t.name!r}: {numel} × {t.dtype.bits}-bit {t.dtype.name} values do not fill whole bytes",
            )
        if bits // 8 != t.end - t.start:
            raise CheckpointError(
                path,
                f"tensor {t.name!r}: shape {list(t.shape)} × {t.dtype.name} needs {bits // 8:,} bytes "
                f"but data_offsets give {t.end - t.start:,}",
            )
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
