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
    GgufCase("key-not-utf8", _file(kvs=[_s(b"\xff\xfe") + struct.pack("<I", 4) + bytes(4)]), "a key is not valid UTF-8"),
]  # fmt: skip

BY_NAME = {c.name: c for c in CASES}


if __name__ == "__main__":
    root = Path(sys.argv[1])
    root.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        (root / f"{case.name}.gguf").write_bytes(case.build())
        print(case.name)
