"""What a cast does with a quantized checkpoint: every quantized weight is written as plain
floats under its logical name (its companions are not written), or the cast is refused.

    quant_layout ─ refusal? ─► CheckpointError (nothing read, nothing written)
                 └────────────► Dequantizing: output name of each stored tensor,
                                the dequantized rows of each weight (``rows.chunks``)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checkpoint import Checkpoint
from ..dtypes import DType
from ..errors import CheckpointError
from ..model_folder.config import read_model_config
from ..quant import rows
from ..quant.layout import QuantizedWeight, QuantLayout
from ..quant.recognise import recognise
from ..quant.shapes import resolve_shapes
from .chunk import cast_chunk
from .precision import ErrorAccumulator


@dataclass
class Dequantizing:
    """The quantized weights of a cast, by the stored name of their codes."""

    layout: QuantLayout
    by_codes: dict[str, QuantizedWeight]

    def output_name(self, stored: str) -> str | None:
        """The name ``stored`` is written under: the logical name for codes, None for a
        companion (not written), itself for every other tensor."""
        w = self.by_codes.get(stored)
        if w is not None:
            return w.name
        return None if stored in self.layout.part_of else stored

    def weight(self, stored: str) -> QuantizedWeight | None:
        return self.by_codes.get(stored)

    def plan(self, ckpt: Checkpoint, w: QuantizedWeight) -> rows.DequantPlan:
        """``w``'s companions read and checked (one clear line when they do not fit)."""
        try:
            return rows.prepare(ckpt, w)
        except CheckpointError as e:  # the cast stops here: its temp files go with it
            raise CheckpointError(e.path, f"{e.reason}; nothing written") from None


def dequantize_and_cast(
    plan: rows.DequantPlan,
    raw: np.ndarray,
    r0: int,
    r1: int,
    target: DType,
    acc: ErrorAccumulator | None,
) -> tuple[np.ndarray, ErrorAccumulator | None]:
    """Rows ``r0:r1`` as the reference dequantizes them, cast to ``target`` (a cast thread's
    unit of work, like :func:`.chunk.cast_chunk`, whose measurement it returns)."""
    values = rows.dequantize_rows(plan, raw, r0, r1)
    data = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    if plan.compute == target:
        return data, None
    return cast_chunk(data, plan.compute, target, acc)


def dequantizing(ckpt: Checkpoint) -> Dequantizing | None:
    """None for a plain checkpoint; a CheckpointError naming the scheme for one a cast would
    corrupt (unknown scheme, no config to confirm it, companions that do not fit)."""
    try:
        config = read_model_config(ckpt.path)
    except CheckpointError:
        config = None  # a plain cast copies a broken config.json as it is; lint reports it
    layout = recognise(ckpt.tensors, config.quant_config if config is not None else None)
    if layout is None:
        return None
    refusal = layout.cast_refusal()
    if refusal is None and not layout.weights:
        return None  # a quantization_config whose tensors are all plain (everything ignored)
    if refusal is not None:
        raise CheckpointError(ckpt.path, refusal)
    try:
        resolve_shapes(ckpt, layout)  # the output header is written before any row is read
    except CheckpointError as e:
        raise CheckpointError(e.path, f"{e.reason}; nothing written") from None
    return Dequantizing(layout, {w.codes.name: w for w in layout.weights.values()})
