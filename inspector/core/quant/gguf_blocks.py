"""GGUF's quantized tensors as logical weights, dequantized by the ggml project's own Python
reference (the ``gguf`` package's ``quants.dequantize``: numpy, F32 out, as ggml computes).

Each GGUF block tensor is one weight of its own (no companions: the scales live in the blocks);
its rows are whole blocks, so a block of rows is read and dequantized at a time.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import numpy as np

from ..formats.gguf import GgufBlocksInfo
from ..layout import TensorInfo
from .layout import QuantizedWeight, QuantLayout
from .schemes import QuantScheme

# where each block keeps its F16 scale ``d`` (ggml-common.h's block structs)
D_OFFSET = {
    "Q4_0": 0, "Q4_1": 0, "Q5_0": 0, "Q5_1": 0, "Q8_0": 0, "IQ4_NL": 0, "IQ4_XS": 0,
    "Q2_K": 80, "Q3_K": 108, "Q4_K": 0, "Q5_K": 0, "Q6_K": 208,
}  # fmt: skip


def gguf_layout(tensors: Iterable[TensorInfo]) -> QuantLayout | None:
    """The quantized tensors of a GGUF file; None when it has none (all F32/F16/BF16…)."""
    blocks = [t for t in tensors if isinstance(t, GgufBlocksInfo)]
    if not blocks:
        return None
    counts: dict[str, int] = {}
    for t in blocks:
        counts[t.ggml.name] = counts.get(t.ggml.name, 0) + 1
    text = "GGUF " + ", ".join(f"{k}×{v}" for k, v in sorted(counts.items(), key=_most))
    layout = QuantLayout(text, confirmed=True)
    missing = sorted({t.ggml.name for t in blocks} - dequantizable_types())
    if missing:
        layout.unsupported = (
            f"the gguf package cannot dequantize {', '.join(missing)}; a cast would write "
            "the blocks as values, so it is refused"
        )
    for t in blocks:
        layout.add(
            QuantizedWeight(t.name, QuantScheme.GGUF, t, t.logical, block_type=t.ggml.name,
                            bits_per_weight=t.ggml.bits_per_weight)
        )  # fmt: skip
    return layout


def _most(kv: tuple[str, int]) -> tuple[int, str]:
    return (-kv[1], kv[0])


@functools.cache
def dequantizable_types() -> frozenset[str]:
    """The block types the installed gguf package dequantizes (asked once per process: every
    weight's plan asks)."""
    from gguf import quants

    return frozenset(name for name in _BLOCK_TYPES if hasattr(quants, name))


_BLOCK_TYPES = (
    "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ2_XXS",
    "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S", "IQ1_M", "IQ4_NL", "IQ4_XS", "TQ1_0",
    "TQ2_0", "MXFP4", "NVFP4", "Q1_0",
)  # fmt: skip


def dequantize_rows(w: QuantizedWeight, raw: np.ndarray, n: int) -> np.ndarray:
    """``n`` rows of ``w`` (their blocks in ``raw``) as F32, the ggml reference's values."""
    from gguf import GGMLQuantizationType, quants

    assert isinstance(w.codes, GgufBlocksInfo)
    qtype = GGMLQuantizationType(w.codes.ggml_id)
    with np.errstate(all="ignore"):  # NaN or inf scales give NaN or inf values, said by stats
        out = quants.dequantize(raw.reshape(n, -1), qtype)
    return np.ascontiguousarray(out, dtype=np.float32).reshape(n, -1)
