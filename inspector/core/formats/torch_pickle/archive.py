"""Where a torch checkpoint keeps its pickle and its storages, for each of torch.save's layouts.

- **zip** (torch ≥ 1.6): ``<folder>/data.pkl`` plus one stored (uncompressed) member
  ``<folder>/data/<key>`` per storage; the folder name is free.
- **legacy** (``_use_new_zipfile_serialization=False``): five pickles in a row (magic number,
  protocol, system info, the object, the sorted storage keys), then per key an 8-byte element count
  and the raw bytes.

Only the pickle is read; a storage is located (offset and length in the file), never read.
"""

from __future__ import annotations

import enum
import mmap
import struct
import zipfile
from dataclasses import dataclass
from typing import Any

from ...errors import CheckpointError
from ...wording import format_bytes
from .containers import fold, is_torchscript, zip_problems
from .values import bounded_repr

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
MAX_PICKLE_BYTES = 256 << 20  # data.pkl holds names and shapes (200k tensors: ~20 MB), no data


class PickleFormat(enum.Enum):
    ZIP = "torch zip"
    LEGACY = "torch legacy"


@dataclass
class StorageSpan:
    """Bytes ``[offset, offset + nbytes)`` of the file hold one storage."""

    offset: int
    nbytes: int


@dataclass
class ZipLayout:
    pickle: bytes
    prefix: str
    storages: dict[str, StorageSpan]  # by key, folded as torch's zip reader compares names

    def storage(self, key: str) -> StorageSpan | None:
        return self.storages.get(fold(key))


def open_zip(path: str, fh: Any) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as e:
        raise CheckpointError(path, f"is a damaged zip archive ({_why(e)})") from None


def read_zip(path: str, fh: Any) -> ZipLayout:
    """The data.pkl and the storage spans of a torch zip; TorchScript, archives torch would read
    differently (see :mod:`.containers`) and odd archives refused."""
    zf = open_zip(path, fh)
    infos = zf.infolist()
    size = fh.seek(0, 2)
    if is_torchscript(zf):
        raise CheckpointError(
            path,
            "this is a TorchScript archive (torch.jit.save: code plus weights), not a checkpoint "
            "of tensors; load it with torch.jit.load and save its state_dict() with safetensors",
        )
    problems = zip_problems(zf, fh, size)
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise CheckpointError(
            path,
            f"is a zip archive torch's reader would read differently: {problems[0]}{more}; "
            "refused (see: checkpoint-inspector scan)",
        )
    by_fold = {fold(i.filename): i for i in infos}  # unique: zip_problems checked
    pkls = [
        i for i in infos if fold(i.filename).endswith("/data.pkl") and i.filename.count("/") == 1
    ]
    if len(pkls) != 1:
        what = "no" if not pkls else f"{len(pkls)}"
        raise CheckpointError(
            path, f"is a zip archive with {what} <folder>/data.pkl; not a torch.save checkpoint"
        )
    prefix = pkls[0].filename[: -len("data.pkl")]
    order = by_fold.get(fold(prefix + "byteorder"))
    byteorder = b"little" if order is None else read_member(path, zf, order, 16)
    if byteorder == b"big":
        raise CheckpointError(
            path, "was saved on a big-endian machine; this tool reads little-endian only"
        )
    if byteorder != b"little":  # torch.load: "Unknown endianness type", exactly these two words
        raise CheckpointError(
            path, f"its byteorder record says {bounded_repr(byteorder, 20)}; torch refuses it"
        )
    storages = {}
    data_dir = fold(prefix + "data/")
    for info in infos:
        name = fold(info.filename)
        if name.startswith(data_dir) and "/" not in name[len(data_dir) :]:
            key = name[len(data_dir) :]
            offset = _data_offset(path, fh, info)
            if offset + info.file_size > size:
                raise CheckpointError(
                    path, f"zip member {info.filename} runs past the end of the file (truncated?)"
                )
            storages[key] = StorageSpan(offset, info.file_size)
            if info.compress_type != zipfile.ZIP_STORED and info.file_size:
                storages[key] = StorageSpan(-1, info.file_size)  # refused when a tensor uses it
    pickle = read_member(path, zf, pkls[0], MAX_PICKLE_BYTES)
    return ZipLayout(pickle, prefix, storages)


def read_member(path: str, zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    if info.file_size > limit:
        raise CheckpointError(
            path, f"{info.filename} is over {format_bytes(limit)}; not a checkpoint pickle"
        )
    try:
        with zf.open(info) as f:
            return f.read(limit + 1)[:limit]
    except Exception as e:  # zlib, CRC, bad headers: assorted types on crafted archives
        raise CheckpointError(path, f"cannot read {info.filename} ({_why(e)})") from None


def _data_offset(path: str, fh: Any, info: zipfile.ZipInfo) -> int:
    """Absolute offset of a member's bytes: after its local header's name and extra field."""
    if info.header_offset < 0:  # zipfile shifts offsets by what it thinks was cut or prepended
        raise CheckpointError(path, f"zip member {info.filename} has a damaged local header")
    fh.seek(info.header_offset)
    local = fh.read(30)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        raise CheckpointError(path, f"zip member {info.filename} has a damaged local header")
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    return info.header_offset + 30 + name_len + extra_len


def check_legacy_header(path: str, values: list[Any]) -> None:
    """The three pickles before the object: magic number, protocol version, system info."""
    magic, protocol, sys_info = values
    if magic != LEGACY_MAGIC:
        raise CheckpointError(
            path,
            "is a plain Python pickle, not a torch.save checkpoint (no PyTorch magic number)",
        )
    if protocol != LEGACY_PROTOCOL:
        raise CheckpointError(
            path, f"uses torch legacy protocol {bounded_repr(protocol, 40)}; only 1001 is known"
        )
    if not isinstance(sys_info, dict) or sys_info.get("little_endian") is not True:
        raise CheckpointError(
            path, "was saved on a big-endian machine; this tool reads little-endian only"
        )


def legacy_storage_spans(
    path: str, mm: mmap.mmap, pos: int, keys: Any, item_size: dict[str, int]
) -> dict[str, StorageSpan]:
    """After the keys pickle, each storage is an int64 element count and then its bytes."""
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise CheckpointError(path, "legacy checkpoint: the storage key list is damaged")
    spans = {}
    size = len(mm)
    for key in keys:
        if key not in item_size:
            raise CheckpointError(
                path, f"legacy checkpoint: storage {bounded_repr(key, 80)} is stored but never used"
            )
        if pos + 8 > size:
            raise CheckpointError(path, "file is shorter than its storages (truncated)")
        (numel,) = struct.unpack_from("<q", mm, pos)
        nbytes = numel * item_size[key]
        if numel < 0 or pos + 8 + nbytes > size:
            raise CheckpointError(path, "file is shorter than its storages (truncated)")
        spans[key] = StorageSpan(pos + 8, nbytes)
        pos += 8 + nbytes
    return spans


def _why(e: BaseException) -> str:
    return (str(e) or type(e).__name__).split("\n")[0][:160]
