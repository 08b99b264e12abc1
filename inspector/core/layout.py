"""What a header holds: tensors (a msgspec Struct, decoded in C by the fast path) and the
per-file header. Shared by both parsing paths and everything that reads checkpoints."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Annotated, Literal

import msgspec

from .dtypes import DTYPES, DType
from .errors import CheckpointError

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


class StridedTensorInfo(TensorInfo, gc=False, omit_defaults=True):
    """A tensor stored as a strided view (transposed, sliced): ``data_offsets`` span its
    contiguous size from ``start``; ``strides`` (in elements) say where each element is."""

    strides: tuple[int, ...] = ()
    span_elems: int = 0  # elements from ``start`` to the last one the view touches, plus one


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of an output file, in data order (every writer's input)."""

    name: str
    dtype: DType
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return self.dtype.nbytes(n)


@dataclass
class Header:
    """A validated header of one file. ``tensors`` keep the order they have in the JSON text."""

    path: str
    tensors: list[TensorInfo]
    metadata: dict[str, str] | None
    data_start: int  # absolute offset of byte 0 of the data section
    file_size: int
    format: str  # the name of the format that read it (formats/<name>/FORMAT_NAME)
    # name -> tensor, when the parser built one anyway (saves a 200k-entry pass in Checkpoint)
    by_name: dict[str, TensorInfo] | None = field(default=None, repr=False, compare=False)
    # what only that format knows (a pickle's plain values and imports), as the format's own
    # object, read through the format's accessor (formats.torch_pickle.pickle_facts)
    facts: object | None = field(default=None, repr=False, compare=False)
    # (device, inode, size, mtime) of the file as it was read: a later open of the path must
    # find the same file, or its bytes are not the ones this header describes
    identity: tuple[int, int, int, int] | None = field(default=None, repr=False, compare=False)

    def check_same_file(self, fd: int) -> None:
        """Raise unless ``fd`` is the file this header was read from, unchanged: a file replaced
        by another of the same size would otherwise be read under this header."""
        if self.identity is None:
            return
        now = file_identity(os.fstat(fd))
        if now[:2] == self.identity[:2] and now[2] < self.identity[2]:
            raise CheckpointError(
                self.path, "file was truncated on disk since it was opened; reopen it"
            )
        if now != self.identity:
            raise CheckpointError(self.path, "file changed on disk since it was opened; reopen it")


def file_identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
