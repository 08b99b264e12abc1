"""Malformed GGUF headers: one rule broken each, with the line a person must get. Built byte by
byte (tests/gguf_files.raw_gguf) so counts and lengths can lie. Used by
tests/core/gguf/test_malformed.py, the CLI test and the fuzz target's seeds."""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.gguf_files import _s, info, kv_str, kv_u32, raw_gguf


@dataclass(frozen=True)
class GgufCase:
    name: str
    build: Callable[[], bytes]
    reason: str


ARCH = kv_str(b"general.architecture", b"llama")
F32_16 = info(b"w", (16,), 0, 0)  # 16 F32 values: 64 bytes at offset 0
DATA = bytes(64)


def _file(**kw) -> Callable[[], bytes]:
    parts = {"kvs": [ARCH], "infos": [F32_16], "data": DATA} | kw
    return lambda: raw_gguf(**parts)


def _array(etype: int, count: int, payload: bytes = b"") -> bytes:
    return _s(b"tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, etype, count) + payload


def _cut(kvs: list[bytes], infos: list[bytes] = (), drop: int = 0) -> Callable[[], bytes]:
    """The header alone (no padding, no data), its last ``drop`` bytes cut off: the file ends
    inside (or, with ``drop=0``, right after) the last field, so the read after it runs out."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(infos), len(kvs))
    whole = head + b"".join(kvs) + b"".join(infos)
    return lambda: whole[: len(whole) - drop]


NAME = _s(b"general.name")  # a key long enough that a cut inside its value passes the count check
BLOCKS = kv_u32(b"llama.block_count", 1)
TOKEN = b"token_embd.weight"
# 65 strings (one more than are kept): 64 in 520 bytes, then the 65th's length, cut or not
STRINGS = _s(b"k") + struct.pack("<IIQ", 9, 8, 65) + _s(b"12345678") + _s(b"") * 63


CASES: list[GgufCase] = [
    GgufCase("short", lambda: b"GGUF\x03\x00\x00\x00", "file is too short to be GGUF (8 bytes; the header alone is 24)"),
    GgufCase("bad-magic", lambda: b"GGML" + raw_gguf([ARCH], [F32_16], DATA)[4:],
             "not a GGUF file: it starts with b'GGML', not b'GGUF'"),
    GgufCase("version-1", _file(version=1), "GGUF version 1: this tool reads GGUF versions 2 and 3"),
    GgufCase("version-4", _file(version=4), "GGUF version 4: this tool reads GGUF versions 2 and 3"),
    GgufCase("big-endian", _file(version=3 << 24),
             "GGUF version 50331648: a big-endian GGUF (this tool reads little-endian ones)"),
    GgufCase("huge-tensor-count", _file(n_tensors=2**60),
             "1,152,921,504,606,846,976 tensors cannot fit in a 192-byte file"),
    GgufCase("huge-kv-count", _file(n_kv=2**62),
             "4,611,686,018,427,387,904 key/values cannot fit in a 192-byte file"),
    GgufCase("key-past-eof", _file(kvs=[struct.pack("<Q", 2**40) + b"x"], infos=[], data=b""),
             "a key runs past the end of the file (needs 1,099,511,627,776 bytes at byte 32, the file has 64): truncated or not GGUF"),
    GgufCase("array-count-huge", _file(kvs=[ARCH, _array(8, 2**61)]),
             "the value of 'tokenizer.ggml.tokens' runs past the end of the file (needs 18,446,744,073,709,551,616 bytes at byte 114, the file has 224): truncated or not GGUF"),
    GgufCase("array-of-arrays", _file(kvs=[ARCH, _array(9, 1)]),
             "'tokenizer.ggml.tokens' is an array of arrays (not supported)"),
    GgufCase("unknown-value-type", _file(kvs=[_s(b"k") + struct.pack("<I", 13)]),
             "'k': unknown value type 13"),
    GgufCase("unknown-ggml-type", _file(infos=[info(b"w", (16,), 99, 0)]), "tensor 'w': unknown ggml type 99"),
    GgufCase("removed-ggml-type", _file(infos=[info(b"w", (32,), 4, 0)]), "tensor 'w': unknown ggml type 4"),
    GgufCase("five-dims", _file(infos=[info(b"w", (1, 1, 1, 1, 16), 0, 0)]),
             "tensor 'w': 5 dimensions (ggml has at most 4)"),
    GgufCase("dims-overflow", _file(infos=[info(b"w", (2**62, 4), 0, 0)]),
             "tensor 'w': dimensions [4611686018427387904, 4] overflow"),
    GgufCase("partial-block", _file(infos=[info(b"w", (30,), 2, 0)]),
             "tensor 'w': rows of 30 values are not whole Q4_0 blocks of 32"),
    GgufCase("long-name", _file(infos=[info(b"w" * 64, (16,), 0, 0)]),
             f"tensor name {'w' * 64!r} is 64 bytes or longer (llama.cpp refuses it)"),
    GgufCase("duplicate-key", _file(kvs=[ARCH, ARCH]), "key 'general.architecture' appears twice"),
    GgufCase("duplicate-tensor", _file(infos=[F32_16, info(b"w", (16,), 0, 64)], data=DATA * 2),
             "tensor name 'w' appears twice"),
    GgufCase("alignment-3", _file(kvs=[ARCH, kv_u32(b"general.alignment", 3)]),
             "general.alignment 3 is not a power of 2"),
    GgufCase("wrong-offset", _file(infos=[info(b"w", (16,), 0, 32)]),
             "tensor 'w': data at offset 32, expected 0 (llama.cpp reads tensors in the order of their infos, each padded to the alignment)"),
    GgufCase("overlap", _file(infos=[F32_16, info(b"v", (16,), 0, 0)], data=DATA * 2),
             "tensor 'v': data at offset 0, expected 64 (llama.cpp reads tensors in the order of their infos, each padded to the alignment)"),
    GgufCase("truncated-data", _file(data=DATA[:40]),
             "tensor 'w': data ends at byte 192 but the file holds only 168: truncated"),
    GgufCase("trailing-data", _file(data=DATA + b"x" * 40), "40 bytes after the last tensor are not described by the header (trailing data)"),
    GgufCase("version-2**32-1", _file(version=2**32 - 1),
             "GGUF version 4294967295: this tool reads GGUF versions 2 and 3"),
    GgufCase("kv-count-one-too-many", _file(n_kv=13), "13 key/values cannot fit in a 192-byte file"),
    GgufCase("tensor-count-one-too-many", _file(n_tensors=8), "8 tensors cannot fit in a 192-byte file"),
    GgufCase("kv-count-at-the-limit", _cut([_s(b"abcde")]),
             "the type of 'abcde' runs past the end of the file (needs 4 bytes at byte 37, the file has 37): truncated or not GGUF"),
    GgufCase("tensor-count-at-the-limit", _cut([], [info(b"wxyz", (16,), 0, 0)], drop=12),
             "the type of 'wxyz' runs past the end of the file (needs 4 bytes at byte 48, the file has 48): truncated or not GGUF"),
    GgufCase("cut-in-value-type", _cut([NAME + b"\x08\x00"]),
             "the type of 'general.name' runs past the end of the file (needs 4 bytes at byte 44, the file has 46): truncated or not GGUF"),
    GgufCase("cut-in-string-value", _cut([kv_str(b"general.name", b"llama-7b")], drop=3),
             "the value of 'general.name' runs past the end of the file (needs 8 bytes at byte 56, the file has 61): truncated or not GGUF"),
    GgufCase("cut-in-scalar-value", _cut([BLOCKS], drop=2),
             "the value of 'llama.block_count' runs past the end of the file (needs 4 bytes at byte 53, the file has 55): truncated or not GGUF"),
    GgufCase("cut-in-element-type", _cut([NAME + struct.pack("<IH", 9, 6)]),
             "the element type of 'general.name' runs past the end of the file (needs 4 bytes at byte 48, the file has 50): truncated or not GGUF"),
    GgufCase("cut-in-array-length", _cut([NAME + struct.pack("<IIH", 9, 6, 2)]),
             "the length of 'general.name' runs past the end of the file (needs 8 bytes at byte 52, the file has 54): truncated or not GGUF"),
    GgufCase("string-array-one-too-long", _file(kvs=[ARCH, _array(8, 14)]),
             "the value of 'tokenizer.ggml.tokens' runs past the end of the file (needs 112 bytes at byte 114, the file has 224): truncated or not GGUF"),
    GgufCase("float-array-one-too-long", _file(kvs=[ARCH, _array(6, 28)]),
             "the value of 'tokenizer.ggml.tokens' runs past the end of the file (needs 112 bytes at byte 114, the file has 224): truncated or not GGUF"),
    GgufCase("long-string-array-cut-in-a-length", _cut([STRINGS + bytes(4)]),
             "the value of 'k' runs past the end of the file (needs 8 bytes at byte 569, the file has 573): truncated or not GGUF"),
    GgufCase("long-string-array-cut-after-a-length", _cut([STRINGS + struct.pack("<Q", 5)]),
             "the value of 'k' runs past the end of the file (needs 5 bytes at byte 577, the file has 577): truncated or not GGUF"),
    GgufCase("cut-in-name-length", _cut([BLOCKS], [info(TOKEN, (16,), 0, 0)], drop=45),
             "the length of a tensor name runs past the end of the file (needs 8 bytes at byte 57, the file has 61): truncated or not GGUF"),
    GgufCase("cut-in-name", _cut([], [info(TOKEN, (16,), 0, 0)], drop=25),
             "a tensor name runs past the end of the file (needs 17 bytes at byte 32, the file has 48): truncated or not GGUF"),
    GgufCase("cut-in-dimension-count", _cut([], [info(TOKEN, (16,), 0, 0)], drop=22),
             "the dimension count of 'token_embd.weight' runs past the end of the file (needs 4 bytes at byte 49, the file has 51): truncated or not GGUF"),
    GgufCase("cut-in-dimensions", _cut([], [info(TOKEN, (4, 4), 0, 0)], drop=16),
             "the dimensions of 'token_embd.weight' runs past the end of the file (needs 16 bytes at byte 53, the file has 65): truncated or not GGUF"),
    GgufCase("cut-after-type", _cut([], [info(TOKEN, (16,), 0, 0)], drop=8),
             "the offset of 'token_embd.weight' runs past the end of the file (needs 8 bytes at byte 65, the file has 65): truncated or not GGUF"),
    GgufCase("alignment-0", _file(kvs=[ARCH, kv_u32(b"general.alignment", 0)]),
             "general.alignment 0 is not a power of 2"),
    GgufCase("alignment-uint64", _file(kvs=[ARCH, _s(b"general.alignment") + struct.pack("<IQ", 10, 32)]),
             "general.alignment has value type 10, not uint32"),
    GgufCase("no-dimensions", _file(infos=[info(b"w", (), 0, 0)], data=b""),
             "tensor 'w': no dimensions (llama.cpp refuses it)"),
    GgufCase("quantized-no-values", _file(infos=[info(b"w", (0, 4), 8, 0)], data=b""),
             "tensor 'w': a Q8_0 tensor of no values"),
    GgufCase("dims-int64-max", _file(infos=[info(b"w", (2**63 - 1,), 24, 0)]),
             "tensor 'w': data ends at byte 9,223,372,036,854,775,935 but the file holds only 192: truncated"),
    GgufCase("key-not-utf8", _file(kvs=[_s(b"\xff\xfe") + struct.pack("<I", 4) + bytes(4)]), "a key is not valid UTF-8"),
]  # fmt: skip

BY_NAME = {c.name: c for c in CASES}


if __name__ == "__main__":
    root = Path(sys.argv[1])
    root.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        (root / f"{case.name}.gguf").write_bytes(case.build())
        print(case.name)
