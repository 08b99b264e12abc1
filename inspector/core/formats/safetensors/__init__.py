"""Safetensors: read a header, validate it exactly as the reference loader, encode one.

``reader`` reads one file (fast msgspec path first, ``careful`` when it declines), ``layout`` is the
one offsets/size check both use, ``foreign`` names files that are something else, ``encode`` writes.
"""

from .careful import parse_header_text
from .encode import TensorEntry, encode_header
from .foreign import sniff_foreign_format
from .name import FORMAT_NAME
from .reader import read_header

__all__ = [
    "FORMAT_NAME",
    "TensorEntry",
    "encode_header",
    "parse_header_text",
    "read_header",
    "sniff_foreign_format",
]
