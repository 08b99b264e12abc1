"""Malformed Burnpack files: one rule broken each, with the line a person must get.

Each builder returns the file's bytes (made by tests/burnpack_files.py, which follows the spec,
with one knob turned). Used by tests/core/burnpack/test_malformed.py, the CLI test and the fuzz
target's seeds. Run as a script to write them to a folder: ``python -m
tests.malformed.burnpack_corpus /tmp/bpk``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cbor2
import numpy as np

from tests.burnpack_files import burnpack_bytes, plain


@dataclass(frozen=True)
class BpkCase:
    name: str
    build: Callable[[], bytes]
    reason: str  # the refusal, exactly (after "<path>: ")


W = plain("w", np.ones(4, np.float32))
V = plain("v", np.ones(70, np.float32))  # 280 bytes: the next tensor starts at 512


def _doc(**descriptor) -> dict:
    d = {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]} | descriptor
    return {"tensors": {"w": {k: v for k, v in d.items() if v is not ...}}}


def _nested(depth: int) -> bytes:
    return b"\x81" * depth + b"\x00"


def _extra(value_cbor: bytes) -> bytes:
    """The valid one-tensor metadata plus a top-level field holding ``value_cbor``."""
    body = cbor2.dumps({"tensors": {"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}})
    return b"\xa2" + body[1:] + cbor2.dumps("future") + value_cbor


def _many_tensors(n: int) -> bytes:
    doc = {"tensors": {f"t{i:06d}": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]}
                       for i in range(n)}}  # fmt: skip
    return burnpack_bytes([], doc=doc)


_TAGS = ("metadata holds CBOR tag {} (a shared or string reference, a date, a bignum…); "
         "burn's writer never writes tags, and this tool reads none")  # fmt: skip


def _shared_shape() -> bytes:
    """Two tensors, the second one's shape a reference to the first one's (tags 28/29)."""
    E = cbor2.dumps

    def t(name: str, shape: bytes, off: list) -> bytes:
        return (E(name) + b"\xa3" + E("dtype") + E("F32") + E("shape") + shape
                + E("data_offsets") + E(off))  # fmt: skip

    return (b"\xa1" + E("tensors") + b"\xa2" + t("v", b"\xd8\x1c" + E([4]), [0, 16])
            + t("w", b"\xd8\x1d\x00", [256, 272]))  # fmt: skip


def _cbor_raw(raw: bytes) -> Callable[[], bytes]:
    return lambda: burnpack_bytes([W], raw_metadata=raw)


def _cbor(doc: object) -> Callable[[], bytes]:
    return lambda: burnpack_bytes([W], doc=doc)


# burn 0.20/0.21's scheme (cubecl 0.9/0.10): Q8S, one F32 scale for the tensor
_LEGACY_Q8S = {
    "value": "Q8S",
    "param": "F32",
    "store": "Native",
    "level": "Tensor",
    "mode": "Symmetric",
}


def _block(dims: list[int], dtype: str = "F32") -> dict:
    return {"size": {"storage": dims + [1] * (5 - len(dims)), "len": len(dims)}, "dtype": dtype}


def _qfloat(
    shape: list[int] | None = None, data_offsets: list[int] | None = None, **fields
) -> Callable[[], bytes]:
    """``w`` quantized (Q8S, per tensor, 4 values and an f32 scale: 8 bytes) with ``fields``
    of its scheme replaced; its data is 16 bytes (the file's), its offsets [0, 8] unless given."""
    scheme = {
        "value": "Q8S",
        "store": "Native",
        "mode": "Symmetric",
        "tensor": None,
        "block": None,
    } | fields
    return _cbor(
        _doc(dtype={"QFloat": scheme}, shape=shape or [4], data_offsets=data_offsets or [0, 8])
    )


def _cut_at_its_metadata() -> bytes:
    """A file ending where its metadata does: no padding, no data section."""
    body = cbor2.dumps(_doc())
    return burnpack_bytes([W])[: 10 + len(body)]


def _duplicate_long_key() -> bytes:
    """A top-level key of 300 characters, twice: cbor2's message quotes it whole."""
    key = cbor2.dumps("k" * 300)
    return burnpack_bytes([W], raw_metadata=b"\xa3" + cbor2.dumps(_doc())[1:] + key + b"\x00" + key
                          + b"\x01")  # fmt: skip


def _two_tensors(second: dict) -> Callable[[], bytes]:
    """``v`` (F32 [4] at [0, 16]), then ``w`` as ``second`` describes it."""
    return _cbor({"tensors": {"v": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                              "w": second}})  # fmt: skip


_DUPLICATE = "error decoding map: Duplicate map key: '"  # cbor2's line, cut at 200 characters
_SCHEME = {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None, "block": None}
_SCALAR = "scalar {} is not an Int, UInt, Float or Bool"


CASES: list[BpkCase] = [
    BpkCase("short", lambda: b"NRUB\x01\x00", "file is too short to be Burnpack (6 bytes; the header is 10)"),
    BpkCase("bad-magic", lambda: burnpack_bytes([W], magic=b"BURN"),
            "not a Burnpack file: it starts with b'BURN', not the magic b'NRUB'"),
    BpkCase("version-2", lambda: burnpack_bytes([W], version=2),
            "Burnpack version 2; burn (and this tool) read version 1"),
    BpkCase("metadata-over-100mb", lambda: burnpack_bytes([W], meta_size=100 * 1024 * 1024 + 1),
            "metadata size 104,857,601 bytes is over burn's limit of 100 MB"),
    BpkCase("metadata-past-eof", lambda: burnpack_bytes([W], meta_size=4000),
            "metadata size 4,000 bytes runs past the end of the file (272 bytes): truncated or not Burnpack"),
    BpkCase("cbor-truncated", lambda: burnpack_bytes([W], raw_metadata=b"\xa1\x67tensors\xa1"),
            "metadata is not valid CBOR: premature end of stream (expected to read at least 1 bytes, got 0 instead)"),
    BpkCase("cbor-too-deep", lambda: burnpack_bytes([W], raw_metadata=_nested(100_000)),
            "metadata nests deeper than burn's limit of 128 containers"),
    BpkCase("field-one-deeper-than-burn", lambda: burnpack_bytes([W], raw_metadata=_extra(_nested(128))),
            "metadata nests deeper than burn's limit of 128 containers"),
    BpkCase("field-deeper-than-burn", lambda: burnpack_bytes([W], raw_metadata=_extra(_nested(130))),
            "metadata nests deeper than burn's limit of 128 containers"),
    BpkCase("field-cycle", lambda: burnpack_bytes([W], raw_metadata=_extra(b"\xd8\x1c\x81\xd8\x1d\x00")),
            _TAGS.format(29)),
    BpkCase("shared-shape", lambda: burnpack_bytes([W], raw_metadata=_shared_shape()), _TAGS.format(28)),
    BpkCase("string-refs", lambda: burnpack_bytes([W], raw_metadata=cbor2.dumps(_doc(), string_referencing=True)),
            _TAGS.format(256)),
    BpkCase("bignum-dtype", _cbor_raw(b"\xa1" + cbor2.dumps("tensors") + b"\xa1" + cbor2.dumps("w") + b"\xa3"
                                      + cbor2.dumps("dtype") + b"\xc2\x59\x01\x00" + b"\x01" * 256
                                      + cbor2.dumps("shape") + cbor2.dumps([4]) + cbor2.dumps("data_offsets")
                                      + cbor2.dumps([0, 16])), _TAGS.format(2)),
    BpkCase("indefinite-dtype", _cbor_raw(b"\xa1" + cbor2.dumps("tensors") + b"\xa1" + cbor2.dumps("w") + b"\xa3"
                                          + cbor2.dumps("dtype") + b"\x7f\x63F32\xff" + cbor2.dumps("shape")
                                          + cbor2.dumps([4]) + cbor2.dumps("data_offsets") + cbor2.dumps([0, 16])),
            "metadata is not valid CBOR: error decoding text string: encountered indefinite length but it has been disabled"),
    BpkCase("shape-product-overflows", _cbor(_doc(shape=[2**64 - 1] * 3, data_offsets=[0, 0])),
            "tensor 'w': its shape overflows u64"),
    BpkCase("shape-300-dims", _cbor(_doc(shape=[2**64 - 1] * 300, data_offsets=[0, 0])),
            "tensor 'w': 300 dimensions"),
    BpkCase("shape-huge-then-zero", _cbor(_doc(shape=[2**64 - 1] * 20 + [0], data_offsets=[0, 0])),
            "tensor 'w': its shape overflows u64"),
    BpkCase("shape-65-dims", _cbor(_doc(shape=[1] * 65, data_offsets=[0, 4])), "tensor 'w': 65 dimensions"),
    BpkCase("duplicate-key", lambda: burnpack_bytes([W], raw_metadata=b"\xa2" + cbor2.dumps(_doc())[1:]
                                                    + cbor2.dumps("tensors") + b"\xa0"),
            "metadata is not valid CBOR: error decoding map: Duplicate map key: 'tensors'"),
    BpkCase("field-with-a-tag", lambda: burnpack_bytes([W], raw_metadata=_extra(b"\xc1\x01")),
            _TAGS.format(1)),
    BpkCase("metadata-size-too-big", lambda: burnpack_bytes(
        [W], raw_metadata=cbor2.dumps(_doc()) + b"\x00\x00"),
            "2 bytes of the metadata follow its CBOR value (the header's metadata size is wrong)"),
    BpkCase("not-a-map", _cbor([1, 2]), "metadata is not a map with a 'tensors' map"),
    BpkCase("no-tensors", _cbor({"metadata": {}}), "metadata is not a map with a 'tensors' map"),
    BpkCase("unknown-dtype", _cbor(_doc(dtype="F8")), "tensor 'w': unknown burn dtype 'F8'"),
    BpkCase("qfloat-no-store", _cbor(_doc(dtype={"QFloat": {"value": "Q8S"}})),
            "tensor 'w' is burn-quantized (QFloat): its scheme has no 'store'"),
    BpkCase("qfloat-not-a-map", _cbor(_doc(dtype={"QFloat": "Q8S"})),
            "tensor 'w' is burn-quantized (QFloat): its scheme is not a map"),
    BpkCase("qfloat-unknown-field", _qfloat(zero_point=[0]),
            "tensor 'w' is burn-quantized (QFloat): its scheme has fields burn does not write: zero_point"),
    BpkCase("qfloat-unknown-value", _qfloat(value="Q3S"),
            "tensor 'w' is burn-quantized (QFloat): value 'Q3S' is not one of burn's (Q8F, Q8S, Q4F, "
            "Q4S, Q2F, Q2S, E4M3, E5M2, E2M1)"),
    BpkCase("qfloat-unknown-mode", _qfloat(mode="Asymmetric"),
            "tensor 'w' is burn-quantized (QFloat): mode 'Asymmetric' is not one of burn's (Symmetric, Lookup)"),
    BpkCase("qfloat-unknown-store", _qfloat(store={"PackedU16": 0}),
            "tensor 'w' is burn-quantized (QFloat): store {'PackedU16': 0} is not Native, {PackedU32: dim} "
            "or {PackedNative: dim}"),
    BpkCase("qfloat-unknown-scale", _qfloat(tensor="F8"),
            "tensor 'w' is burn-quantized (QFloat): tensor scale 'F8' is not one of burn's (F32, F16, BF16, "
            "UE8M0, UE4M3)"),
    BpkCase("qfloat-burn-0.21-size", _cbor(_doc(dtype={"QFloat": _LEGACY_Q8S}, shape=[3], data_offsets=[0, 7])),
            "tensor 'w': shape [3] × QFloat(Q8S, tensor, burn 0.21) needs 8 bytes (values and scales) but "
            "data_offsets give 7"),
    BpkCase("qfloat-burn-0.21-level", _cbor(_doc(dtype={"QFloat": _LEGACY_Q8S | {"level": "Channel"}})),
            "tensor 'w' is burn-quantized (QFloat): level 'Channel' is not Tensor or {Block: size}"),
    BpkCase("qfloat-block-4-bytes", _qfloat(block={"size": {"storage": [32, 1, 1, 1], "len": 1}, "dtype": "F32"}),
            "tensor 'w' is burn-quantized (QFloat): block size {'len': 1, 'storage': [32, 1, 1, 1]} is not 5 "
            "bytes and a length up to 5"),
    BpkCase("qfloat-block-of-0", _qfloat(block=_block([0])),
            "tensor 'w' is burn-quantized (QFloat): block [0] has a dimension of 0"),
    BpkCase("qfloat-block-more-dims", _qfloat(block=_block([2, 2]), data_offsets=[0, 20]),
            "tensor 'w' (QFloat(Q8S, block 2×2)): block 2×2 has 2 dimensions, the tensor 1"),
    BpkCase("qfloat-packed-dim-outside", _qfloat(store={"PackedU32": 1}, data_offsets=[0, 8]),
            "tensor 'w' (QFloat(Q8S, tensor, packed u32 dim 1)): packed dimension 1 of a 1-dimension tensor"),
    BpkCase("qfloat-size-no-scale", _qfloat(data_offsets=[0, 4]),
            "tensor 'w': shape [4] × QFloat(Q8S, tensor) needs 8 bytes (values and scales) but "
            "data_offsets give 4"),
    BpkCase("qfloat-size-block-scales", _qfloat(block=_block([3]), data_offsets=[0, 8]),
            "tensor 'w': shape [4] × QFloat(Q8S, block 3) needs 12 bytes (values and scales) but "
            "data_offsets give 8"),
    BpkCase("qfloat-size-packed-row", _qfloat(value="Q4S", store={"PackedU32": 0}, shape=[3, 3], data_offsets=[0, 14]),
            "tensor 'w': shape [3, 3] × QFloat(Q4S, tensor, packed u32) needs 16 bytes (values and scales) "
            "but data_offsets give 14"),
    BpkCase("bool-store-unknown", _cbor(_doc(dtype={"Bool": "U4"})), "tensor 'w': unknown burn dtype {'Bool': 'U4'}"),
    BpkCase("shape-negative", _cbor(_doc(shape=[-4])), "tensor 'w': shape is not a list of sizes"),
    BpkCase("shape-bool", _cbor(_doc(shape=[True])), "tensor 'w': shape is not a list of sizes"),
    BpkCase("shape-float", _cbor(_doc(shape=[4.0])), "tensor 'w': shape is not a list of sizes"),
    BpkCase("no-shape", _cbor(_doc(shape=...)), "tensor 'w': shape is not a list of sizes"),
    BpkCase("offsets-three", _cbor(_doc(data_offsets=[0, 16, 32])), "tensor 'w': data_offsets is not [start, end]"),
    BpkCase("offsets-backwards", _cbor(_doc(data_offsets=[16, 0])), "tensor 'w': data ends (0) before it starts (16)"),
    BpkCase("size-disagrees", _cbor(_doc(shape=[5])),
            "tensor 'w': shape [5] × F32 needs 20 bytes but data_offsets give 16"),
    BpkCase("size-disagrees-one-byte", _cbor(_doc(shape=[1], dtype="U8")),
            "tensor 'w': shape [1] × U8 needs 1 byte but data_offsets give 16"),
    BpkCase("over-10gib", _cbor(_doc(shape=[2**34], dtype="U8", data_offsets=[0, 2**34])),
            "tensor 'w': 17,179,869,184 bytes; burn refuses tensors over 10 GiB"),
    BpkCase("misaligned", lambda: burnpack_bytes([W, V], offsets={"v": (16, 296)}),
            "tensor 'v': data starts at byte 16, not on a 256-byte boundary"),
    BpkCase("overlap", lambda: burnpack_bytes([V, W], offsets={"w": (256, 272)}),
            "tensor 'w': data starts at byte 256, overlapping the tensor before it (which ends at 280)"),
    BpkCase("gap", lambda: burnpack_bytes([W], offsets={"w": (512, 528)}),
            "tensor 'w': data starts at byte 512, leaving 512 bytes after byte 0 that no tensor describes"),
    BpkCase("outside-the-file", lambda: burnpack_bytes([W], offsets={"w": (0, 16)})[:-8],
            "tensor data ends at byte 272 but the file holds only 264 bytes: truncated"),
    BpkCase("trailing-data", lambda: burnpack_bytes([W], trailing=b"x" * 9),
            "9 bytes after the last tensor are not described by the metadata (trailing data)"),
    BpkCase("param-id-negative", _cbor(_doc(param_id=-1)), "tensor 'w': param_id is not a u64"),
    BpkCase("metadata-not-strings", _cbor(_doc() | {"metadata": {"a": 1}}), "'metadata' is not a map of strings"),
    BpkCase("scalar-bad", _cbor(_doc() | {"scalars": {"lr": {"Float": "x"}}}),
            "scalar 'lr' is not an Int, UInt, Float or Bool"),
    BpkCase("name-not-text", _cbor({"tensors": {1: {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}}),
            "metadata is not valid CBOR: error decoding map: map key must be a text string or byte "
            "string, not int"),
    BpkCase("name-bytes", _cbor({"tensors": {b"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}}),
            "tensor b'w': not a name with a descriptor map"),
    BpkCase("version-65535", lambda: burnpack_bytes([W], version=65535),
            "Burnpack version 65535; burn (and this tool) read version 1"),
    BpkCase("metadata-exactly-100mb-past-eof", lambda: burnpack_bytes([W], meta_size=100 * 1024 * 1024),
            "metadata size 104,857,600 bytes runs past the end of the file (272 bytes): truncated or not Burnpack"),
    BpkCase("ends-with-its-metadata", _cut_at_its_metadata,
            "tensor data ends at byte 272 but the file holds only 57 bytes: truncated"),
    BpkCase("field-with-a-tag-cbor2-does-not-know", lambda: burnpack_bytes([W], raw_metadata=_extra(b"\xd9\x13\x88\x01")),
            _TAGS.format(5000)),
    BpkCase("self-described-cbor", lambda: burnpack_bytes([W], raw_metadata=b"\xd9\xd9\xf7" + cbor2.dumps(_doc())),
            _TAGS.format(55799)),
    BpkCase("duplicate-long-key", _duplicate_long_key,
            "metadata is not valid CBOR: " + _DUPLICATE + "k" * (200 - len(_DUPLICATE))),
    BpkCase("size-a-1024th", _cbor(_doc(shape=[256], data_offsets=[0, 1])),
            "tensor 'w': shape [256] × F32 needs 1,024 bytes but data_offsets give 1"),
    BpkCase("size-64-times", _cbor(_doc(shape=[2], dtype="U8", data_offsets=[0, 128])),
            "tensor 'w': shape [2] × U8 needs 2 bytes but data_offsets give 128"),
    BpkCase("size-8-ninths", _cbor(_doc(shape=[9], dtype="U8", data_offsets=[0, 8])),
            "tensor 'w': shape [9] × U8 needs 9 bytes but data_offsets give 8"),
    BpkCase("size-as-its-end", _two_tensors({"dtype": "U8", "shape": [512], "data_offsets": [256, 256]}),
            "tensor 'w': shape [512] × U8 needs 512 bytes but data_offsets give 0"),
    BpkCase("exactly-10gib-not-its-size", _cbor(_doc(shape=[5], dtype="U8", data_offsets=[0, 10 * 2**30])),
            "tensor 'w': shape [5] × U8 needs 5 bytes but data_offsets give 10,737,418,240"),
    BpkCase("over-10gib-not-at-0", _cbor(_doc(shape=[2**34], dtype="U8", data_offsets=[256, 256 + 2**34])),
            "tensor 'w': 17,179,869,184 bytes; burn refuses tensors over 10 GiB"),
    BpkCase("gap-past-10gib", lambda: burnpack_bytes([W], offsets={"w": (2**34, 2**34 + 16)}),
            "tensor 'w': data starts at byte 17179869184, leaving 17,179,869,184 bytes after byte 0 that no "
            "tensor describes"),
    BpkCase("gap-after-a-tensor", lambda: burnpack_bytes([W, V], offsets={"v": (768, 1048)}),
            "tensor 'v': data starts at byte 768, leaving 512 bytes after byte 256 that no tensor describes"),
    BpkCase("qfloat-no-bytes", _qfloat(data_offsets=[0, 0]),
            "tensor 'w': shape [4] × QFloat(Q8S, tensor) needs 8 bytes (values and scales) but "
            "data_offsets give 0"),
    BpkCase("qfloat-size-not-at-0", _two_tensors({"dtype": {"QFloat": _SCHEME}, "shape": [4],
                                                  "data_offsets": [256, 260]}),
            "tensor 'w': shape [4] × QFloat(Q8S, tensor) needs 8 bytes (values and scales) but "
            "data_offsets give 4"),
    BpkCase("qfloat-65-dims", _qfloat(shape=[1] * 65, data_offsets=[0, 69]), "tensor 'w': 65 dimensions"),
    BpkCase("qfloat-and-another-key", _cbor(_doc(dtype={"QFloat": "Q8S", "Extra": 1})),
            "tensor 'w': unknown burn dtype {'QFloat': 'Q8S', 'Extra': 1}"),
    BpkCase("dtype-safetensors-name-not-burns", _cbor(_doc(dtype="BOOL", data_offsets=[0, 4])),
            "tensor 'w': unknown burn dtype 'BOOL'"),
    BpkCase("dtype-a-list", _cbor(_doc(dtype=["F32"])), "tensor 'w': unknown burn dtype ['F32']"),
    BpkCase("dtype-not-bool-with-a-store", _cbor(_doc(dtype={"Float": "U32"})),
            "tensor 'w': unknown burn dtype {'Float': 'U32'}"),
    BpkCase("no-offsets", _cbor(_doc(data_offsets=...)), "tensor 'w': data_offsets is not [start, end]"),
    BpkCase("offset-a-float", _cbor(_doc(data_offsets=[0, 16.0])), "tensor 'w': data_offsets is not [start, end]"),
    BpkCase("offset-u64-max", _cbor(_doc(dtype="Flex32", data_offsets=[0, 2**64 - 1])),
            "tensor 'w': 18,446,744,073,709,551,615 bytes; burn refuses tensors over 10 GiB"),
    BpkCase("param-id-float", _cbor(_doc(param_id=1.5)), "tensor 'w': param_id is not a u64"),
    BpkCase("scalar-int-over-i64", _cbor(_doc() | {"scalars": {"x": {"Int": 2**63}}}), _SCALAR.format("'x'")),
    BpkCase("scalar-int-under-i64", _cbor(_doc() | {"scalars": {"x": {"Int": -(2**63) - 1}}}), _SCALAR.format("'x'")),
    BpkCase("scalar-uint-negative", _cbor(_doc() | {"scalars": {"x": {"UInt": -1}}}), _SCALAR.format("'x'")),
    BpkCase("scalar-bytes-name", _cbor(_doc() | {"scalars": {b"lr": {"Float": 0.5}}}), _SCALAR.format("b'lr'")),
    BpkCase("scalar-not-a-map", _cbor(_doc() | {"scalars": {"lr": [0.5]}}), _SCALAR.format("'lr'")),
    BpkCase("over-100k-tensors", lambda: _many_tensors(100_001),
            "100,001 tensors; burn refuses files of more than 100,000"),
]  # fmt: skip

BY_NAME = {c.name: c for c in CASES}


def write_all(root: Path) -> dict[str, Path]:
    root.mkdir(parents=True, exist_ok=True)
    out = {}
    for case in CASES:
        out[case.name] = root / f"{case.name}.bpk"
        out[case.name].write_bytes(case.build())
    return out


if __name__ == "__main__":
    for name, path in write_all(Path(sys.argv[1])).items():
        print(f"{name}\t{path}")
