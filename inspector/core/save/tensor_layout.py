"""Where every byte of an output tensor file goes, per output format: the head (header,
metadata, padding), each tensor's start, the file's size. Chosen by the output's name."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import CheckpointError
from ..formats.burnpack import SUFFIX as BURNPACK_SUFFIX
from ..formats.burnpack import NotBurnpackable, encode_burnpack_head
from ..formats.safetensors import encode_header

if TYPE_CHECKING:
    from ..formats.burnpack import BurnpackFacts
    from ..layout import TensorEntry


class OutputFormat(enum.Enum):
    SAFETENSORS = "safetensors"
    BURNPACK = "burnpack"


def output_format(path: str) -> OutputFormat:
    """A ``.bpk`` output is Burnpack; anything else is safetensors."""
    return (
        OutputFormat.BURNPACK
        if path.lower().endswith(BURNPACK_SUFFIX)
        else OutputFormat.SAFETENSORS
    )


@dataclass(frozen=True)
class FileLayout:
    head: bytes
    starts: tuple[int, ...]  # absolute offset of each entry's data, in entry order
    size: int


def safetensors_layout(
    entries: Sequence[TensorEntry], metadata: Mapping[str, str] | None
) -> FileLayout:
    head = encode_header(entries, metadata)
    starts, pos = [], len(head)
    for e in entries:
        starts.append(pos)
        pos += e.nbytes
    return FileLayout(head, tuple(starts), pos)


def burnpack_layout(
    path: str,
    entries: Sequence[TensorEntry],
    metadata: Mapping[str, str] | None,
    source: BurnpackFacts | None = None,
) -> FileLayout:
    """``source``: the facts of a Burnpack source, whose param ids, scalars and burn dtype names
    are kept; a refusal (a dtype burn lacks, too many tensors) names the output."""
    try:
        head = encode_burnpack_head(
            entries,
            metadata,
            burn_dtypes=source.burn_dtypes if source else None,
            param_ids=source.param_ids if source else None,
            scalars=source.scalars if source else None,
        )
    except NotBurnpackable as e:
        raise CheckpointError(path, f"cannot be written as Burnpack: {e}") from None
    return FileLayout(head.head, head.starts, head.size)
