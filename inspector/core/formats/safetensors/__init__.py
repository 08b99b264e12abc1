"""Safetensors headers: read, validate exactly as the reference loader, encode.

``reader`` reads one file (fast msgspec path first, ``careful`` when it declines), ``layout`` is the
one offsets/size check both use, ``foreign`` names files that are something else, ``encode`` writes.
"""

from ...layout import MAX_HEADER_SIZE, Header, TensorInfo
from ...wording import _json_type
from .careful import parse_header_text
from .encode import TensorEntry, encode_header
from .foreign import sniff_foreign_format
from .reader import _open_regular, read_header

__all__ = [
    "MAX_HEADER_SIZE",
    "Header",
    "TensorEntry",
    "TensorInfo",
    "_json_type",
    "_open_regular",
    "encode_header",
    "parse_header_text",
    "read_header",
    "sniff_foreign_format",
]
