"""What an allowed global resolves to (a stand-in of ours, never the named code) and what
importing it means for the file."""

from __future__ import annotations

import enum
from typing import Any

from .values import PickleError


class ImportVerdict(enum.Enum):
    """What importing one global means for the file."""

    TENSOR = "tensor"  # torch's tensor, storage and dtype machinery
    CONTAINER = "container"  # OrderedDict, set, bytes: plain data
    UNSUPPORTED = "unsupported"  # a torch rebuild this tool cannot read (quantized, sparse…)
    REFUSED = "refused"  # anything else: code a checkpoint has no reason to run

    @property
    def is_safe(self) -> bool:
        return self is not ImportVerdict.REFUSED


class StandIn:
    """What an allowed global resolves to; calling it applies our semantics, never the named code."""

    def __init__(self, qualname: str, verdict: ImportVerdict) -> None:
        self.qualname, self.verdict = qualname, verdict

    def call(self, args: tuple) -> Any:
        raise PickleError(f"calls {self.qualname}, which a tensor checkpoint never calls")

    def __repr__(self) -> str:
        return self.qualname
