"""What every format plug-in offers the registry (and nothing else outside its folder)."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, BinaryIO, Protocol

if TYPE_CHECKING:
    from ..layout import Header


class Claim(enum.IntEnum):
    """How sure a format is that a file is its own; the strongest claim reads the file."""

    NO = 0
    MAYBE = 1  # worth a try: read it, and let the next format try if it refuses
    NAMED = 2  # its name says so: a refusal is that format's refusal (it names what it found)
    SIGNATURE = 3  # its bytes say so, whatever its name (torch.load decides by bytes)


class FileFormat(Protocol):
    name: str

    def claim(self, path: str, head: bytes, f: BinaryIO) -> Claim:
        """``head``: the first 512 bytes; ``f`` the open file, to look further (and seek back)."""
        ...

    def read(self, path: str) -> Header:
        """The file's tensors and metadata, header only: no tensor data is read."""
        ...

    def refuse_if_also_mine(self, path: str) -> None:
        """Raise CheckpointError when a file another format read is also this format's in a
        way its own loader would act on (a safetensors file that is also a pickle)."""
        ...
