"""A checkpoint's tensors as the model sees them: each quantized weight once, in the place of
its first stored tensor (codes or a companion, whichever the order puts first); every other
tensor as it is."""

from __future__ import annotations

from collections.abc import Iterable

from ..layout import TensorInfo
from .layout import QuantizedWeight, QuantLayout


def logical_items(
    tensors: Iterable[TensorInfo], quant: QuantLayout | None
) -> list[TensorInfo | QuantizedWeight]:
    if quant is None or not quant.weights:
        return list(tensors)
    items: list[TensorInfo | QuantizedWeight] = []
    seen: set[str] = set()
    for t in tensors:
        owner = quant.part_of.get(t.name)
        if owner is None:
            items.append(t)
        elif owner not in seen:
            seen.add(owner)
            items.append(quant.weights[owner])
    return items
