"""One chunk cast (and measured): the unit of work of the cast threads and worker processes."""

from __future__ import annotations

import numpy as np

from ..dtypes import DType
from .kernels import cast_bits
from .narrow_float import ROUNDED_FROM_F32, round_f32
from .precision import BLOCK, ErrorAccumulator


def cast_chunk(
    raw: np.ndarray, src: DType, dst: DType, acc: ErrorAccumulator | None
) -> tuple[np.ndarray, ErrorAccumulator | None]:
    """The ``dst`` bytes of one chunk of ``src`` bytes, and its measurement (a fresh accumulator).

    Threads and worker processes run the same blocks, so the report's sums are grouped alike
    and come out the same, bit for bit, whichever ran the cast.
    """
    part = acc.fresh() if acc is not None else None
    if src.name == "F32" and dst.name in ROUNDED_FROM_F32:
        # the common case: one fused pass per block gives both the codes and the report's values
        w = raw.view(np.uint32)
        out = np.empty(w.size, dtype=np.uint8 if dst.bits == 8 else np.uint16)
        with np.errstate(all="ignore"):
            for i in range(0, w.size, BLOCK):
                got = round_f32(w[i : i + BLOCK], dst.name, out[i : i + BLOCK], part is not None)
                if part is not None:
                    part.measure(got.magnitude, got.rounded, got.top)
        return out.view(np.uint8), part
    out = cast_bits(raw.view(f"u{src.bits // 8}"), src, dst)
    if part is not None:
        part.update(raw.view(src.numpy), out.view(dst.numpy))
    return out.view(np.uint8), part
