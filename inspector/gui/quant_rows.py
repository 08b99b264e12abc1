"""A quantized checkpoint in the tensor table: the row of each weight's codes stands for the
weight (its logical name, shape and parameter count), and its companions (scales, zero points,
shapes) are folded away until the person asks to see them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.core.wording import format_bytes

from .i18n import translate
from .table_text import format_shape
from .tensor_columns import Col

if TYPE_CHECKING:
    from inspector.core.layout import TensorInfo
    from inspector.core.quant.layout import QuantizedWeight, QuantLayout


class QuantRows:
    def __init__(self, tensors: list[TensorInfo], layout: QuantLayout) -> None:
        index = {t.name: i for i, t in enumerate(tensors)}
        self.weights: dict[int, QuantizedWeight] = {}  # tensor index of the codes -> weight
        companions = set()
        for w in layout.weights.values():
            i = index.get(w.codes.name)
            if i is not None:
                self.weights[i] = w
            companions.update(index[n] for n in w.companions if n in index)
        self.companions = frozenset(companions)
        self.refusal = layout.cast_refusal()  # why a cast is refused; None: it dequantizes

    def cell(self, i: int, col: int) -> str | None:
        """The Name, DType, Shape and Params cells of a weight's codes row: the weight's own
        (DType: what its codes are stored as, a GGUF block type such as ``Q4_K``)."""
        w = self.weights.get(i)
        if w is None:
            return None
        if col == Col.NAME:
            return w.name
        if col == Col.DTYPE:
            return w.stored_dtype
        if col == Col.SHAPE:
            return format_shape(w.shape)
        if col == Col.PARAMS:
            return f"{w.params:,}"
        if col == Col.SIZE:  # on disk: the codes and every companion
            return format_bytes(w.nbytes)
        return None

    def tooltip(self, i: int) -> str | None:
        w = self.weights.get(i)
        if w is None:
            return None
        return translate(
            "TensorTable", "{name}\nstored as {codes} ({storage}), with: {companions}"
        ).format(
            name=w.name,
            codes=w.codes.name,
            storage=w.storage(),
            companions=", ".join(w.companions) or "—",
        )
