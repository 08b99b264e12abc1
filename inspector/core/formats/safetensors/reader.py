"""Read one file's header: the 8-byte length, the JSON, never the data; fast path first."""

from __future__ import annotations

import os
import struct

from ...errors import CheckpointError
from ...layout import MAX_HEADER_SIZE, Header
from ...regular_file import open_regular
from .careful import parse_header_text
from .foreign import _foreign_reason


def read_header(path: str | os.PathLike[str]) -> Header:
    """Read and validate the header of one ``.safetensors`` file; raise CheckpointError if invalid."""
    path = os.fspath(path)
    try:
        return _read_header(path)
    except CheckpointError as e:
        # A file that is not safetensors: say what it is instead, when its first bytes tell.
        try:
            with open_regular(path) as f:  # never blocks: a FIFO is refused, not opened
                head = f.read(16)
        except (OSError, CheckpointError):
            raise e from None
        foreign = _foreign_reason(path, head) if len(head) >= 4 else None
        if foreign:
            raise CheckpointError(path, foreign) from None
        raise


def _read_header(path: str) -> Header:
    with open_regular(path) as f:
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
    from .fast import parse_fast  # imports this module: import on first use

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
