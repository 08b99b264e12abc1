"""Encode a Burnpack header exactly as burn's writer lays it out (``burn-pack/src/writer.rs``).

The CBOR is what ciborium makes of burn's ``Metadata`` struct: a map of ``tensors`` (sorted by
name, a Rust ``BTreeMap``), then ``metadata`` and ``scalars`` when not empty; each descriptor
``dtype``, ``shape``, ``data_offsets`` and ``param_id`` when set; definite lengths, integers in
their shortest form, which is cbor2's default encoding. ciborium also writes every float in its
shortest exact width; cbor2 does that only in canonical mode, which would also re-sort map keys,
so the scalars (the only floats) are encoded one by one and joined under a map head written here.
Data follows in the given order, each tensor on a 256-byte boundary, zero padding between.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...layout import TensorEntry
from .dtypes import BurnDType, burn_dtype, our_dtype
from .spec import (
    MAGIC,
    MAX_FILE_SIZE,
    MAX_METADATA_SIZE,
    MAX_TENSOR_BYTES,
    MAX_TENSORS,
    VERSION,
    aligned,
    data_section_start,
)


@dataclass(frozen=True)
class BurnpackHead:
    """The bytes before the data section, and where each entry's data starts in the file."""

    head: bytes
    starts: tuple[int, ...]  # absolute file offsets, in entry order
    size: int  # the whole file


class NotBurnpackable(ValueError):
    """A tensor burn has no dtype for (F8, F4, complex): the message names it."""


def encode_burnpack_head(
    entries: Sequence[TensorEntry],
    metadata: Mapping[str, str] | None = None,
    *,
    burn_dtypes: Mapping[str, BurnDType] | None = None,
    param_ids: Mapping[str, int] | None = None,
    scalars: Mapping[str, Mapping[str, object]] | None = None,
) -> BurnpackHead:
    """Header, CBOR metadata and padding for ``entries`` (data written in their order).

    ``burn_dtypes``: a tensor's dtype as burn wrote it in the source (``Flex32``…), used when it
    still holds the same bytes type; ``param_ids`` and ``scalars`` as read from a source file.
    """
    import cbor2

    if len(entries) > MAX_TENSORS:
        raise NotBurnpackable(f"{len(entries):,} tensors; burn loads at most 100,000 from one file")
    burn_dtypes, param_ids = burn_dtypes or {}, param_ids or {}
    descriptors: dict[str, dict[str, object]] = {}
    offsets = []
    pos = 0
    for e in entries:
        kept = burn_dtypes.get(e.name)
        value = (
            kept if kept is not None and _holds(kept, e.dtype.name) else burn_dtype(e.dtype.name)
        )
        if value is None:
            raise NotBurnpackable(
                f"tensor {e.name!r} is {e.dtype.name}, which burn has no dtype for; "
                "cast it to a float burn has (F32, F16, BF16, F64) or write safetensors"
            )
        if e.name in descriptors:
            raise ValueError(f"tensor name {e.name!r} appears twice")
        if e.nbytes > MAX_TENSOR_BYTES:
            raise NotBurnpackable(
                f"tensor {e.name!r} is {e.nbytes:,} bytes; burn loads at most 10 GiB per tensor"
            )
        start = aligned(pos)
        pos = start + e.nbytes
        d: dict[str, object] = {
            "dtype": value,
            "shape": list(e.shape),
            "data_offsets": [start, pos],
        }
        if e.name in param_ids:
            d["param_id"] = param_ids[e.name]
        descriptors[e.name] = d
        offsets.append(start)
    cbor = [cbor2.dumps("tensors"), cbor2.dumps(dict(sorted(descriptors.items())))]
    if metadata:
        cbor += [cbor2.dumps("metadata"), cbor2.dumps(dict(sorted(metadata.items())))]
    if scalars:
        cbor += [cbor2.dumps("scalars"), _scalars_cbor(scalars)]
    body = _map_head(len(cbor) // 2) + b"".join(cbor)
    if len(body) > MAX_METADATA_SIZE:
        raise NotBurnpackable(
            f"its metadata would be {len(body):,} bytes; burn reads at most 100 MB of it"
        )
    start = data_section_start(len(body))
    head = MAGIC + struct.pack("<HI", VERSION, len(body)) + body
    head += bytes(start - len(head))
    if start + pos > MAX_FILE_SIZE:
        raise NotBurnpackable(f"the file would be {start + pos:,} bytes; burn loads at most 100 GB")
    return BurnpackHead(head, tuple(start + o for o in offsets), start + pos)


def _holds(value: BurnDType, name: str) -> bool:
    return our_dtype(value) == name


def _scalars_cbor(scalars: Mapping[str, Mapping[str, object]]) -> bytes:
    import cbor2

    out = [_map_head(len(scalars))]
    for key, value in sorted(scalars.items()):
        ((kind, x),) = value.items()
        body = _float_cbor(x) if isinstance(x, float) else cbor2.dumps(x)
        out += [cbor2.dumps(key), b"\xa1" + cbor2.dumps(kind) + body]
    return b"".join(out)


def _float_cbor(x: float) -> bytes:
    """A float in the narrowest width that keeps its exact bits, as ciborium writes it (a NaN's
    sign and payload included: 0.0/0.0 on x86 is ``f9 fe00``, a payload NaN stays 8 bytes)."""
    bits = struct.pack("<d", x)
    for head, fmt in ((b"\xf9", ">e"), (b"\xfa", ">f")):
        try:
            narrow = struct.pack(fmt, x)
        except OverflowError:
            continue
        if struct.pack("<d", struct.unpack(fmt, narrow)[0]) == bits:
            return head + narrow
    return b"\xfb" + struct.pack(">d", x)


def _map_head(n: int) -> bytes:
    """The CBOR head of a definite-length map of ``n`` pairs (major type 5)."""
    if n < 24:
        return bytes([0xA0 + n])
    for info, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if n < 1 << (8 * struct.calcsize(fmt)):
            return bytes([0xA0 + info]) + struct.pack(fmt, n)
    raise ValueError("map too large")
