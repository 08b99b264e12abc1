"""The fast path for ordinary Burnpack metadata: descriptors converted to TensorInfo structs in
C (msgspec), as safetensors' fast path decodes its JSON.

A dtype outside the plain names (``Flex32``, ``Bool(...)``) or a value of an unexpected type
returns None, and the careful path in ``reader`` judges it and words the reason; offsets and
sizes are checked after either path by ``reader._check_layout``. 100k descriptors: ~70 ms.
"""

from __future__ import annotations

import operator

import msgspec

from ...layout import TensorInfo

_PLAIN = frozenset(
    ("F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8")
)
_U64_MAX = 2**64 - 1
_INFOS = dict[str, TensorInfo]
_DATA_ORDER = operator.attrgetter("data_offsets")


def fast_tensors(
    path: str, entries: dict
) -> tuple[list[TensorInfo], dict[str, TensorInfo], dict[str, int]] | None:
    """Tensors (in data order), the same by name, and the param ids of ``entries``; or None to
    take the careful path."""
    try:
        infos = msgspec.convert(entries, _INFOS)
        param_ids = {
            name: d["param_id"]
            for name, d in entries.items()
            if "param_id" in d and d["param_id"] is not None
        }
    except (msgspec.ValidationError, TypeError, AttributeError):
        return None
    if not all(type(p) is int and 0 <= p <= _U64_MAX for p in param_ids.values()):
        return None
    plain = _PLAIN
    for name, t in infos.items():
        if t.dtype_name not in plain or t.shape is None or t.data_offsets is None:
            return None
        t.name = name
        t.file = path
    tensors = list(infos.values())
    tensors.sort(key=_DATA_ORDER)  # the data's order: the module's, as burn wrote it
    return tensors, infos, param_ids
