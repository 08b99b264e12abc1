"""The safetensors dtype table and how each maps onto numpy (via ml_dtypes for BF16/F8/F6/F4)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class DType:
    """One safetensors dtype. ``bits`` may be 4 or 6 for packed sub-byte floats."""

    name: str
    bits: int
    kind: str  # "float", "int", "uint", "bool", "complex"
    numpy_spec: str  # numpy dtype string, or "ml_dtypes.<name>" for BF16/F8/F6/F4

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype viewing these bytes (packed F4/F6 unpack to one value per byte)."""
        return _numpy_dtype(self.numpy_spec)

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_packed(self) -> bool:
        return self.bits % 8 != 0

    def nbytes(self, numel: int) -> int:
        """Byte length of ``numel`` elements (packed dtypes round bits up only at the end)."""
        return (numel * self.bits + 7) // 8

    def __str__(self) -> str:
        return self.name


@functools.cache
def _numpy_dtype(spec: str) -> np.dtype:
    # ml_dtypes costs ~0.9 s to import (it registers every float8/6/4 type with numpy): only
    # commands that touch BF16/F8 data pay for it, not `list` or `check`. Nor is numpy loaded
    # before a dtype is viewed: the CLI parses `--target` first, then starts the cast workers
    # (.worker_boot.start_workers_early) while numpy loads
    import numpy as np

    if spec.startswith("ml_dtypes."):
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, spec.removeprefix("ml_dtypes.")))
    return np.dtype(spec)


def _d(name: str, bits: int, kind: str, spec: str) -> DType:
    return DType(name, bits, kind, spec)


# Order follows the reference loader's enum (alignment order); used for stable sorting.
DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        _d("BOOL", 8, "bool", "bool"),
        _d("F4", 4, "float", "ml_dtypes.float4_e2m1fn"),
        _d("F6_E2M3", 6, "float", "ml_dtypes.float6_e2m3fn"),
        _d("F6_E3M2", 6, "float", "ml_dtypes.float6_e3m2fn"),
        _d("U8", 8, "uint", "u1"),
        _d("I8", 8, "int", "i1"),
        _d("F8_E5M2", 8, "float", "ml_dtypes.float8_e5m2"),
        _d("F8_E4M3", 8, "float", "ml_dtypes.float8_e4m3fn"),
        _d("F8_E8M0", 8, "float", "ml_dtypes.float8_e8m0fnu"),
        _d("F8_E4M3FNUZ", 8, "float", "ml_dtypes.float8_e4m3fnuz"),
        _d("F8_E5M2FNUZ", 8, "float", "ml_dtypes.float8_e5m2fnuz"),
        _d("I16", 16, "int", "<i2"),
        _d("U16", 16, "uint", "<u2"),
        _d("F16", 16, "float", "<f2"),
        _d("BF16", 16, "float", "ml_dtypes.bfloat16"),
        _d("I32", 32, "int", "<i4"),
        _d("U32", 32, "uint", "<u4"),
        _d("F32", 32, "float", "<f4"),
        _d("C64", 64, "complex", "<c8"),
        _d("F64", 64, "float", "<f8"),
        _d("I64", 64, "int", "<i8"),
        _d("U64", 64, "uint", "<u8"),
    )
}

# Casting targets the engine guarantees bit-identical to torch.Tensor.to.
CAST_TARGETS: tuple[str, ...] = ("F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2")

_ALIASES: dict[str, str] = {
    "float64": "F64",
    "double": "F64",
    "fp64": "F64",
    "float32": "F32",
    "float": "F32",
    "fp32": "F32",
    "float16": "F16",
    "half": "F16",
    "fp16": "F16",
    "bfloat16": "BF16",
    "bf16": "BF16",
    "float8_e4m3fn": "F8_E4M3",
    "float8_e4m3": "F8_E4M3",
    "fp8_e4m3": "F8_E4M3",
    "e4m3": "F8_E4M3",
    "float8_e5m2": "F8_E5M2",
    "fp8_e5m2": "F8_E5M2",
    "e5m2": "F8_E5M2",
    "float8_e8m0fnu": "F8_E8M0",
    "float8_e4m3fnuz": "F8_E4M3FNUZ",
    "float8_e5m2fnuz": "F8_E5M2FNUZ",
    "float4_e2m1fn": "F4",
    "fp4": "F4",
    "int8": "I8",
    "uint8": "U8",
    "int16": "I16",
    "uint16": "U16",
    "int32": "I32",
    "uint32": "U32",
    "int64": "I64",
    "long": "I64",
    "uint64": "U64",
    "bool": "BOOL",
    "complex64": "C64",
}


def parse_dtype(text: str) -> DType:
    """Accept safetensors names in any case and torch-style aliases (``torch.float16`` too)."""
    key = text.strip()
    if key.startswith("torch."):
        key = key[len("torch.") :]
    upper = key.upper()
    if upper in DTYPES:
        return DTYPES[upper]
    name = _ALIASES.get(key.lower())
    if name is None:
        known = ", ".join(DTYPES)
        raise ValueError(
            f"unknown dtype {text!r} (known: {known}; aliases like float32, fp16, bf16)"
        )
    return DTYPES[name]


def parse_cast_target(text: str) -> DType:
    """Like :func:`parse_dtype` but only floating types the cast engine supports."""
    dtype = parse_dtype(text)
    if dtype.name not in CAST_TARGETS:
        raise ValueError(
            f"cannot cast to {dtype.name}: supported targets are {', '.join(CAST_TARGETS)}"
        )
    return dtype
