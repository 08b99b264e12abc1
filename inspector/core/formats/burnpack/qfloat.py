"""burn's ``DType::QFloat(QuantScheme)`` as its CBOR descriptor says it, and how many bytes a
tensor of that scheme holds.

burn (``burn-std/src/tensor/quantization.rs``, commit 2c06be351) stores a quantized tensor as
one byte run: the values (``Native``: one per storage unit; ``PackedU32(0)``: LSB-first in
little-endian u32 words, the innermost dimension padded to whole words), then one scale per
block in the scheme's scale dtype, then, for a two-level scheme, the f32 per-tensor scale. No
padding between the parts (``quantized_data_len``). The scheme is cubecl's ``QuantScheme``
(``cubecl-common/src/quant/scheme.rs`` at rev 48348968), serialised by serde: ``{"value",
"store", "mode", "tensor", "block"}``. burn 0.20/0.21's layout (``{"value", "param", "store",
"level", "mode"}``, cubecl 0.9/0.10) is read too: its byte size is that burn's
``TensorSnapshot::data_len`` (values padded to 4 bytes, then the scales at ``param``'s size).
"""

from __future__ import annotations

import math
import reprlib
from dataclasses import dataclass
from enum import Enum


class QValue(str, Enum):
    """burn's ``QuantValue``: what one quantized value is."""

    Q8F = "Q8F"
    Q8S = "Q8S"
    Q4F = "Q4F"
    Q4S = "Q4S"
    Q2F = "Q2F"
    Q2S = "Q2S"
    E4M3 = "E4M3"
    E5M2 = "E5M2"
    E2M1 = "E2M1"


_BITS = {
    QValue.Q8F: 8, QValue.Q8S: 8, QValue.E4M3: 8, QValue.E5M2: 8,
    QValue.Q4F: 4, QValue.Q4S: 4, QValue.E2M1: 4, QValue.Q2F: 2, QValue.Q2S: 2,
}  # fmt: skip


class QStore(str, Enum):
    """burn's ``QuantStore``; the packed ones carry the packed dimension, from the innermost."""

    NATIVE = "Native"
    PACKED_U32 = "PackedU32"
    PACKED_NATIVE = "PackedNative"


class QMode(str, Enum):
    SYMMETRIC = "Symmetric"
    LOOKUP = "Lookup"


class ScaleDtype(str, Enum):
    """burn's ``ScaleDtype`` (``param`` in the earlier layout): how a scale is stored."""

    F32 = "F32"
    F16 = "F16"
    BF16 = "BF16"
    UE8M0 = "UE8M0"
    UE4M3 = "UE4M3"

    @property
    def size(self) -> int:
        return {"F32": 4, "F16": 2, "BF16": 2}.get(self.value, 1)


class QFloatError(ValueError):
    """A QFloat descriptor burn would not read as a scheme: the message says what is wrong."""


@dataclass(frozen=True)
class BurnQuant:
    """One tensor's quantization scheme, as burn's ``QuantScheme`` holds it."""

    value: QValue
    store: QStore
    packed_dim: int  # the packed stores' argument (0: innermost); 0 for Native
    mode: QMode
    tensor: ScaleDtype | None  # the per-tensor level (None and no block: per-tensor F32)
    block: tuple[int, ...] | None  # the block level's size, outermost first
    block_dtype: ScaleDtype | None
    legacy: bool = False  # burn ≤ 0.21's layout: values padded to 4 bytes, blocks flat runs

    @property
    def bits(self) -> int:
        return _BITS[self.value]

    @property
    def stored_bits(self) -> int:
        """Bits of one storage unit (``QuantStore::size_bits``)."""
        if self.store is QStore.PACKED_U32:
            return 32
        if self.store is QStore.PACKED_NATIVE:
            return self.bits * (2 if self.value is QValue.E2M1 else 1)
        return self.bits

    @property
    def num_quants(self) -> int:
        return self.stored_bits // self.bits

    @property
    def scale_dtype(self) -> ScaleDtype:
        """The innermost level's scale dtype: the per-block scales, else the per-tensor one."""
        return self.block_dtype or self.tensor or ScaleDtype.F32

    @property
    def global_dtype(self) -> ScaleDtype | None:
        """The per-tensor scale of a two-level scheme, stored after the block scales."""
        return self.tensor if self.block is not None else None

    def block_dims(self, rank: int) -> list[int]:
        """``BlockSize::to_dim_vec``: the block over ``rank`` dimensions, leading ones as 1."""
        assert self.block is not None and len(self.block) <= rank
        return [1] * (rank - len(self.block)) + list(self.block)

    def num_blocks(self, shape: tuple[int, ...]) -> list[int]:
        """The scale grid's shape (``params_shape``): one scale per block, a partial one too."""
        if self.block is None:
            return [1]
        return [-(-d // b) for d, b in zip(shape, self.block_dims(len(shape)), strict=True)]

    def values_len(self, shape: tuple[int, ...]) -> int:
        """Bytes of the values (``storage_elements`` × the storage unit's bytes); burn 0.21's
        ``TensorSnapshot::data_len``: flat units, whole bytes only, padded to 4."""
        nq = self.num_quants
        if self.legacy:
            return -(-(-(-math.prod(shape) // nq) * (self.stored_bits // 8)) // 4) * 4
        if self.store is not QStore.NATIVE and nq > 1 and shape:
            dims = list(shape)
            pd = len(dims) - self.packed_dim - 1
            dims[pd] = -(-dims[pd] // nq)
            units = math.prod(dims)
        else:
            units = -(-math.prod(shape) // nq)
        return units * -(-self.stored_bits // 8)

    def data_len(self, shape: tuple[int, ...]) -> int:
        """burn's ``quantized_data_len``: values, block scales, then the per-tensor scale."""
        scales = math.prod(self.num_blocks(shape)) * self.scale_dtype.size
        return (
            self.values_len(shape) + scales + (self.global_dtype.size if self.global_dtype else 0)
        )

    def check_shape(self, shape: tuple[int, ...]) -> None:
        """What burn's own functions would panic on for this shape: one line."""
        if self.block is not None and len(self.block) > len(shape):
            raise QFloatError(
                f"block {_dims(self.block)} has {len(self.block)} dimensions, the tensor "
                f"{len(shape)}"
            )
        if self.store is not QStore.NATIVE and self.packed_dim >= max(1, len(shape)):
            raise QFloatError(
                f"packed dimension {self.packed_dim} of a {len(shape)}-dimension tensor"
            )

    def describe(self) -> str:
        """``QFloat(Q8S, block 32)``, ``QFloat(Q4S, tensor, packed u32)``…"""
        if self.block is None:
            level = "tensor"
        else:
            level = f"block {_dims(self.block)}"
            if self.global_dtype is not None:
                level += f" × tensor {self.global_dtype.value}"
        parts = [self.value.value, level]
        if self.scale_dtype is not ScaleDtype.F32:
            parts.append(f"scales {self.scale_dtype.value}")
        if self.store is QStore.PACKED_U32:
            parts.append("packed u32" + (f" dim {self.packed_dim}" if self.packed_dim else ""))
        elif self.store is QStore.PACKED_NATIVE:
            parts.append(f"packed native dim {self.packed_dim}")
        if self.mode is QMode.LOOKUP:
            parts.append("lookup")
        if self.legacy:
            parts.append("burn 0.21")
        return f"QFloat({', '.join(parts)})"


def _dims(block: tuple[int, ...]) -> str:
    return "×".join(str(b) for b in block) if block else "1"


_FIELDS = ("value", "store", "mode", "tensor", "block")
_LEGACY = frozenset(("value", "param", "store", "level", "mode"))


def parse_qfloat(scheme: object) -> BurnQuant:
    """The scheme of a ``{"QFloat": scheme}`` dtype; QFloatError names what burn would not read
    or what this tool does not (the earlier layout, fields burn does not write)."""
    if not isinstance(scheme, dict):
        raise QFloatError("its scheme is not a map")
    keys = set(scheme)
    if keys == _LEGACY:
        return _legacy(scheme)
    unknown = sorted(str(k)[:40] for k in keys - set(_FIELDS))
    if unknown:
        raise QFloatError(f"its scheme has fields burn does not write: {', '.join(unknown)}")
    for k in ("value", "store", "mode"):
        if k not in scheme:
            raise QFloatError(f"its scheme has no {k!r}")
    value = _member(QValue, scheme["value"], "value")
    store, packed_dim = _store(scheme["store"])
    mode = _member(QMode, scheme["mode"], "mode")
    tensor = scheme.get("tensor")
    tensor = None if tensor is None else _member(ScaleDtype, tensor, "tensor scale")
    block, block_dtype = _block(scheme.get("block"))
    return BurnQuant(value, store, packed_dim, mode, tensor, block, block_dtype)


def _legacy(scheme: dict) -> BurnQuant:
    """burn 0.20/0.21's scheme (cubecl 0.9/0.10): one ``param`` for the scales of a ``level``,
    ``"Tensor"`` or ``{"Block": block size}``."""
    value = _member(QValue, scheme["value"], "value")
    store, packed_dim = _store(scheme["store"])
    mode = _member(QMode, scheme["mode"], "mode")
    param = _member(ScaleDtype, scheme["param"], "param")
    level = scheme["level"]
    if level == "Tensor":
        return BurnQuant(value, store, packed_dim, mode, param, None, None, legacy=True)
    if isinstance(level, dict) and len(level) == 1 and "Block" in level:
        dims = _block_size(level["Block"])
        return BurnQuant(value, store, packed_dim, mode, None, dims, param, legacy=True)
    raise QFloatError(f"level {_short(level)} is not Tensor or {{Block: size}}")


def _member(enum: type[Enum], raw: object, what: str):
    if type(raw) is str:
        try:
            return enum(raw)
        except ValueError:
            pass
    raise QFloatError(
        f"{what} {_short(raw)} is not one of burn's ({', '.join(m.value for m in enum)})"
    )


def _store(raw: object) -> tuple[QStore, int]:
    if raw == "Native":
        return QStore.NATIVE, 0
    if isinstance(raw, dict) and len(raw) == 1:
        ((kind, dim),) = raw.items()
        if kind in ("PackedU32", "PackedNative") and type(dim) is int and 0 <= dim < 64:
            return QStore(kind), dim
    raise QFloatError(
        f"store {_short(raw)} is not Native, {{PackedU32: dim}} or {{PackedNative: dim}}"
    )


def _block(raw: object) -> tuple[tuple[int, ...] | None, ScaleDtype | None]:
    if raw is None:
        return None, None
    if not isinstance(raw, dict) or set(raw) != {"size", "dtype"}:
        raise QFloatError(f"block {_short(raw)} is not {{size, dtype}}")
    return _block_size(raw["size"]), _member(ScaleDtype, raw["dtype"], "block scale")


def _block_size(size: object) -> tuple[int, ...]:
    """``BlockSize`` as serde writes it: ``{"storage": [5 bytes], "len": n}``."""
    if not isinstance(size, dict) or set(size) != {"storage", "len"}:
        raise QFloatError(f"block size {_short(size)} is not {{storage, len}}")
    storage, n = size["storage"], size["len"]
    if (
        not isinstance(storage, list)
        or len(storage) != 5
        or not all(type(b) is int and 0 <= b <= 255 for b in storage)
        or type(n) is not int
        or not 0 <= n <= 5
    ):
        raise QFloatError(f"block size {_short(size)} is not 5 bytes and a length up to 5")
    dims = tuple(storage[:n])
    if 0 in dims:
        raise QFloatError(f"block {list(dims)} has a dimension of 0")
    return dims


def _short(raw: object) -> str:
    """A value for a message: containers and strings cut short, never rendered whole."""
    return reprlib.repr(raw)
