"""burn's ``DType`` as its serde/CBOR value, and the safetensors dtype holding the same bytes.

Unit variants serialise as their name (``"F32"``), ``Bool(BoolStore)`` as ``{"Bool": "Native"}``
(burn before mid-2026 wrote a bare ``"Bool"``), ``QFloat(QuantScheme)`` as ``{"QFloat": {...}}``.
``Flex32`` is an F32 stored as F32. The original value of every tensor whose name differs from
the plain one is kept, so a file written back keeps exactly what burn wrote.
"""

from __future__ import annotations

from typing import TypeAlias

BurnDType: TypeAlias = str | dict  # the decoded CBOR value

_PLAIN = ("F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8")
_BY_NAME = {name: name for name in _PLAIN} | {"Flex32": "F32", "Bool": "BOOL"}
_BOOL_STORES = {"Native": "BOOL", "U8": "BOOL", "U32": "U32"}
_BURN_BOOL = {"Bool": "Native"}


def our_dtype(value: object) -> str | None:
    """The safetensors dtype name holding a burn dtype's bytes; None if burn has no such dtype
    (or QFloat, whose packed values and inline scales the reader describes apart)."""
    if isinstance(value, str):
        return _BY_NAME.get(value)
    if isinstance(value, dict) and len(value) == 1:
        ((kind, store),) = value.items()
        if kind == "Bool" and isinstance(store, str):
            return _BOOL_STORES.get(store)
    return None


def is_burn_quantized(value: object) -> bool:
    return isinstance(value, dict) and "QFloat" in value


def burn_dtype(name: str) -> BurnDType | None:
    """How burn writes a tensor of the safetensors dtype ``name``; None if burn has none."""
    if name == "BOOL":
        return dict(_BURN_BOOL)
    return name if name in _PLAIN else None


def describe(value: object) -> str:
    """A burn dtype value as a person reads it (``Bool(U32)``, ``QFloat(Q8S, block 32)``)."""
    if is_burn_quantized(value) and isinstance(value, dict) and len(value) == 1:
        from .qfloat import QFloatError, parse_qfloat

        try:
            return parse_qfloat(value["QFloat"]).describe()
        except QFloatError:
            return "QFloat"
    if isinstance(value, dict) and len(value) == 1:
        ((kind, inner),) = value.items()
        return f"{kind}({inner})" if isinstance(inner, str) else str(kind)
    return str(value)
