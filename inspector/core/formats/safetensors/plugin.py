"""Safetensors as a format plug-in: claimed by its name, else tried first."""

from __future__ import annotations

from typing import TYPE_CHECKING, BinaryIO

from ..protocol import Claim
from .name import FORMAT_NAME
from .reader import read_header

if TYPE_CHECKING:
    from ...layout import Header


class SafetensorsFormat:
    name = FORMAT_NAME

    def claim(self, path: str, head: bytes, f: BinaryIO) -> Claim:
        # a file named .safetensors is refused as safe_open refuses it (read_header names what
        # it is instead): every tool downstream would take it for safetensors
        return Claim.NAMED if path.endswith(".safetensors") else Claim.MAYBE

    def read(self, path: str) -> Header:
        return read_header(path)

    def refuse_if_also_mine(self, path: str) -> None:
        return None  # safetensors loaders never act on another format's bytes


SAFETENSORS = SafetensorsFormat()
