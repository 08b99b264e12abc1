"""PyTorch pickles as a format plug-in: claimed as ``torch.load`` decides, by bytes."""

from __future__ import annotations

from typing import TYPE_CHECKING, BinaryIO

from ..protocol import Claim
from .containers import is_torch_tar
from .reader import FORMAT_NAME, looks_like_pickle, read_pickle_checkpoint, refuse_polyglot

if TYPE_CHECKING:
    from ...layout import Header


class TorchPickleFormat:
    name = FORMAT_NAME

    def claim(self, path: str, head: bytes, f: BinaryIO) -> Claim:
        zipped = head.startswith(b"PK\x03\x04")
        if not zipped and is_torch_tar(f):  # torch.load tries tarfile before anything else
            return Claim.SIGNATURE  # read to be refused by name
        if path.endswith(".safetensors"):
            return Claim.NO  # safetensors refuses it, and says what it is
        if zipped:
            return Claim.SIGNATURE
        # a header length of 640 begins like a pickle (80 02 ..): safetensors is tried first
        return Claim.MAYBE if looks_like_pickle(path, head) else Claim.NO

    def read(self, path: str) -> Header:
        return read_pickle_checkpoint(path)

    def refuse_if_also_mine(self, path: str) -> None:
        refuse_polyglot(path)


TORCH_PICKLE = TorchPickleFormat()
