"""GGUF as a format plug-in: claimed by its magic bytes, or by its ``.gguf`` name."""

from __future__ import annotations

from typing import TYPE_CHECKING, BinaryIO

from ..protocol import Claim
from .reader import read_gguf
from .spec import FORMAT_NAME, MAGIC, SUFFIX

if TYPE_CHECKING:
    from ...layout import Header


class GgufFormat:
    name = FORMAT_NAME

    def claim(self, path: str, head: bytes, f: BinaryIO) -> Claim:
        if path.endswith(".safetensors"):
            return Claim.NO  # safetensors refuses it, and says what it is
        if head.startswith(MAGIC):
            return Claim.SIGNATURE  # llama.cpp decides by these bytes
        return Claim.NAMED if path.lower().endswith(SUFFIX) else Claim.NO

    def read(self, path: str) -> Header:
        return read_gguf(path)

    def refuse_if_also_mine(self, path: str) -> None:
        return None  # a file another format read does not start with GGUF


GGUF = GgufFormat()
