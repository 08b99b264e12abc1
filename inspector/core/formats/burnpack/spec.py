"""Burnpack's fixed numbers, as burn's ``burn-pack`` crate defines them (``src/base.rs``).

A file is a 10-byte header (u32 LE magic ``0x4255524E``, bytes ``NRUB``; u16 version; u32
metadata size), the CBOR metadata, zero padding to the next 256-byte boundary, then the data
section, every tensor starting on a 256-byte boundary, offsets relative to that section.
"""

from __future__ import annotations

FORMAT_NAME = "burnpack"
SUFFIX = ".bpk"
MAGIC = b"NRUB"  # 0x4255524E little-endian
VERSION = 1  # the newest burn writes and reads
HEADER_SIZE = 10
ALIGNMENT = 256

# burn's reader refuses anything past these (a file burn cannot load is refused here too)
MAX_METADATA_SIZE = 100 * 1024 * 1024
MAX_TENSORS = 100_000
MAX_TENSOR_BYTES = 10 * 1024**3  # 64-bit platforms
MAX_FILE_SIZE = 100 * 1024**3
MAX_CBOR_DEPTH = 128


def aligned(offset: int) -> int:
    """The smallest multiple of :data:`ALIGNMENT` at or after ``offset``."""
    return -(-offset // ALIGNMENT) * ALIGNMENT


def data_section_start(metadata_size: int) -> int:
    """Absolute offset of byte 0 of the data section (burn's ``aligned_data_section_start``)."""
    return aligned(HEADER_SIZE + metadata_size)
