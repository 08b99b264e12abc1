"""Logical shapes the header cannot give: a pack-quantized weight's ``weight_shape`` (its last
dimension is only bounded by the packed size under channel or tensor strategies) and a
bitsandbytes 4-bit weight's shape, packed into its quant state. Both are a few bytes, read
when a command needs exact shapes (``cast`` before it writes the output header, ``list``)."""

from __future__ import annotations

import numpy as np

from ..checkpoint import Checkpoint
from ..errors import CheckpointError
from ..layout import TensorInfo
from ..wording import _q
from . import bnb
from .layout import Part, QuantizedWeight, QuantLayout
from .schemes import QuantScheme


def resolve_shapes(ckpt: Checkpoint, layout: QuantLayout) -> None:
    """Set each weight's exact shape; a stored shape that contradicts the codes is one line."""
    for w in layout.weights.values():
        if Part.SHAPE in w.parts and w.scheme is QuantScheme.CT_PACK:
            w.shape = stored_shape(ckpt, w.parts[Part.SHAPE], w)
        elif w.scheme is QuantScheme.BNB_4BIT:
            try:
                w.shape = bnb.logical_shape(bnb.read_state(lambda t: np.array(ckpt.view(t)), w))
            except ValueError as e:
                raise CheckpointError(
                    w.codes.file, f"{_q(w.name)} (bitsandbytes 4-bit): {e}"
                ) from None


def stored_shape(ckpt: Checkpoint, t: TensorInfo, w: QuantizedWeight) -> tuple[int, ...]:
    """``weight_shape``'s values, checked against the packed codes."""
    if t.dtype.name not in ("I64", "I32") or t.numel != len(w.codes.shape) or t.numel > 8:
        raise CheckpointError(
            t.file, f"weight_shape {_q(t.name)} is {t.dtype.name} {list(t.shape)}"
        )
    shape = tuple(int(v) for v in np.array(ckpt.view(t)).reshape(-1))
    packed_cols = w.codes.shape[-1]
    bits = w.args.num_bits if w.args else 32
    if shape[:-1] != tuple(w.codes.shape[:-1]) or not (
        0 < shape[-1] <= packed_cols * 32 // bits and -(-shape[-1] * bits // 32) == packed_cols
    ):
        raise CheckpointError(
            t.file,
            f"weight_shape {list(shape)} of {_q(w.name)} disagrees with its packed codes "
            f"{list(w.codes.shape)} (int{bits})",
        )
    return shape
