"""The one layout check both parsing paths use: offsets contiguous from 0, sizes matching
shape × dtype, the data section covered exactly, shapes multiplied as the reference does."""

from __future__ import annotations

import math

from ...errors import CheckpointError
from ...layout import _BITS, _U64_MAX, TensorInfo
from ...wording import _dump, _q, byte_count


def validate_layout(path: str, tensors: list[TensorInfo], data_len: int) -> None:
    """Offsets contiguous from 0, sizes matching shape × dtype, the data section covered exactly.

    One tight loop in header order (how every writer lays files out); only a file whose offsets
    are out of that order is sorted and walked again. Runs on every open, 200k times for a big
    header, for both parsing paths.
    """
    end = _walk(path, tensors, in_header_order=True)
    if end is None:
        end = _walk(path, sorted(tensors, key=lambda t: t.data_offsets), in_header_order=False)
    _check_end(path, end, data_len)


def _walk(path: str, tensors: list[TensorInfo], in_header_order: bool) -> int | None:
    """Where the data of ``tensors``, laid end to end, stops; raises on a size or offset problem.

    ``in_header_order``: a tensor out of place returns None (the caller sorts and walks again)
    instead of being reported, since a file may list its tensors in any order.
    """
    pos = 0
    bits_of = _BITS
    prod = math.prod
    for t in tensors:
        start, end = t.data_offsets
        if start != pos or end < start:
            if in_header_order:
                return None
            _bad_offsets(path, t, pos)
        pos = end
        numel = prod(t.shape)
        if numel * bits_of[t.dtype_name] != (end - start) * 8 or (
            numel == 0 and _prefix_overflows(t.shape)
        ):
            _bad_size(path, t, numel)
    return pos


def _check_end(path: str, pos: int, data_len: int) -> None:
    if pos == data_len:
        return
    if pos > data_len:
        raise CheckpointError(
            path,
            f"tensor data ends at byte {pos:,} but the file holds only {data_len:,} data bytes: truncated",
        )
    raise CheckpointError(
        path,
        f"{data_len - pos:,} bytes after the last tensor are not described by the header (trailing data)",
    )


def _prefix_overflows(shape: tuple[int, ...]) -> bool:
    """The reference multiplies dimensions left to right in u64: [2**63, 2, 0] overflows at 2.
    A dimension past u64 is refused before that (it is a usize); msgspec reads it as an int."""
    n = 1
    for d in shape:
        if d > _U64_MAX:
            return True
        n *= d
        if n > _U64_MAX:
            return True
    return False


def _bad_offsets(path: str, t: TensorInfo, pos: int) -> None:
    start, end = t.data_offsets
    if end < start:
        why = f"ends ({end}) before it starts ({start})"
    elif start < pos:
        why = f"starts at byte {start}, overlapping the previous tensor (which ends at {pos})"
    else:
        why = f"starts at byte {start}, leaving a gap after byte {pos}"
    raise CheckpointError(path, f"tensor {_q(t.name)}: data_offsets {why}")


def _bad_size(path: str, t: TensorInfo, numel: int) -> None:
    """Why shape × dtype does not match the byte range, in the reference loader's order of checks."""
    numel_checked = 1
    for d in t.shape:
        numel_checked *= d
        if numel_checked > _U64_MAX:
            raise CheckpointError(
                path, f"tensor {_q(t.name)}: shape {_dump(list(t.shape))} overflows"
            )
    bits = numel * t.dtype.bits
    if bits > _U64_MAX:
        raise CheckpointError(path, f"tensor {_q(t.name)}: shape {_dump(list(t.shape))} overflows")
    if bits % 8:
        raise CheckpointError(
            path,
            f"tensor {_q(t.name)}: {numel} × {t.dtype.bits}-bit {t.dtype.name} values do not fill whole bytes",
        )
    raise CheckpointError(
        path,
        f"tensor {_q(t.name)}: shape {list(t.shape)} × {t.dtype.name} needs "
        f"{byte_count(bits // 8)} but data_offsets give {t.end - t.start:,}",
    )
