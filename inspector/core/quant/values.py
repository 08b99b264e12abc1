"""A quantized weight's values, for statistics, histograms and comparisons: its rows
dequantized as the reference computes them, widened to F32 (exact), a block at a time."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..checkpoint import Checkpoint
from ..progress import Job
from ..stats import STATS_CHUNK_BYTES, TensorStats, values_stats_and_histogram
from . import rows
from .kernels import to_f32
from .layout import QuantizedWeight


def dequantized_f32(
    ckpt: Checkpoint, w: QuantizedWeight, chunk_bytes: int = STATS_CHUNK_BYTES
) -> Iterator[np.ndarray]:
    plan = rows.prepare(ckpt, w)
    for values in rows.chunks(ckpt, plan, chunk_bytes):
        yield to_f32(values, plan.compute).reshape(-1)


def weight_stats_and_histogram(
    ckpt: Checkpoint, w: QuantizedWeight, bins: int = 64
) -> Job[tuple[TensorStats, np.ndarray, np.ndarray]]:
    """Stats and histogram of the dequantized values (what the model computes with)."""
    stored = sum(t.nbytes for t in w.stored)
    return values_stats_and_histogram(
        w, lambda: dequantized_f32(ckpt, w), lambda c: stored * c.size // max(1, w.params), bins
    )
