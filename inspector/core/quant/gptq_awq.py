"""GPTQ and AWQ int weights (2, 4 or 8 bits packed in int32), dequantized by the formulas their
reference kernels use in torch (AutoGPTQ/GPTQModel's ``dequantize_weight``, AutoAWQ's
``dequantize_gemm``): ``scale[g] * (code - zero[g])`` in F16, ``g = g_idx[i]``.

Both store the weight transposed (``[in, out]``, packed along one of them); the model's
``Linear.weight`` is ``[out, in]``, so a block of *output* rows is a block of *columns* of the
stored codes: they are gathered from the mapped file a block at a time (a few pages per stored
row), never the whole tensor.

* GPTQ: ``qweight`` [in·bits/32, out] packed along ``in``; ``qzeros`` [groups, out·bits/32]
  packed along ``out``; stored zero + 1 is the zero point (``gptq``), or the zero itself
  (``checkpoint_format: gptq_v2``); ``g_idx`` [in] the group of each input (act-order).
* AWQ (GEMM): ``qweight`` [in, out·bits/32] and ``qzeros`` [groups, out·bits/32], both packed
  along ``out`` in the order 0 2 4 6 1 3 5 7; groups of ``group_size`` consecutive inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..dtypes import DTYPES
from ..layout import TensorInfo
from .kernels import F32, cast_array
from .layout import Part, QuantizedWeight
from .schemes import QuantScheme

AWQ_ORDER = np.array([0, 2, 4, 6, 1, 3, 5, 7])  # packed slot of output j within its word
STEP = 64  # output rows per block: whole int32 words for 2, 4 and 8 bits


@dataclass
class IntPacking:
    bits: int
    awq: bool
    zero_plus_one: bool  # GPTQ v1: the stored zero is one less than the zero point
    g_idx: np.ndarray  # [in]: the group of each input
    zeros: np.ndarray  # [groups, out] int16, unpacked (and +1 for GPTQ v1)
    scales: np.ndarray  # [groups, out] F16 as stored


def _unpack_words(words: np.ndarray, bits: int, slots: np.ndarray) -> np.ndarray:
    """Codes at ``slots`` (bit position ``slot * bits``) of each int32 word, as int16."""
    w = words.astype(np.int64) & 0xFFFFFFFF
    return ((w[..., None] >> (slots * bits)) & ((1 << bits) - 1)).astype(np.int16)


def unpack_along_out(words: np.ndarray, bits: int, awq: bool) -> np.ndarray:
    """[rows, out·bits/32] int32 → [rows, out] codes (GPTQ's qzeros, AWQ's qweight and qzeros)."""
    per = 32 // bits
    slots = np.arange(per)
    if awq:
        slots = np.argsort(AWQ_ORDER[:per]) if per == 8 else slots
    codes = _unpack_words(words, bits, slots)  # [rows, words, per]: output j = slot order
    return codes.reshape(words.shape[0], -1)


def unpack_along_in(words: np.ndarray, bits: int) -> np.ndarray:
    """GPTQ's qweight [in·bits/32, out] → [in, out] codes."""
    per = 32 // bits
    codes = _unpack_words(words, bits, np.arange(per))  # [words, out, per]
    return codes.transpose(0, 2, 1).reshape(words.shape[0] * per, words.shape[1])


def prepare(view: Callable[[TensorInfo], np.ndarray], w: QuantizedWeight) -> IntPacking:
    """Companions read and checked; ``view(t)`` gives a stored tensor as an array."""
    args = w.args
    assert args is not None
    bits, awq = args.num_bits, w.scheme is QuantScheme.AWQ
    if bits not in (2, 4, 8) or (awq and bits != 4):
        raise ValueError(f"{bits}-bit {'AWQ' if awq else 'GPTQ'} packing is not read yet")
    out_f, in_f = w.shape
    scales_t, zeros_t = w.parts.get(Part.SCALE), w.parts.get(Part.ZERO_POINT)
    if scales_t is None or zeros_t is None:
        raise ValueError("needs scales and qzeros")
    scales = np.array(view(scales_t))
    if scales_t.dtype.name != "F16" or scales.ndim != 2 or scales.shape[1] != out_f:
        raise ValueError(
            f"scales are {scales_t.dtype.name} {list(scales.shape)}, not F16 [groups, {out_f}]"
        )
    groups = scales.shape[0]
    zeros = unpack_along_out(np.array(view(zeros_t)), bits, awq)
    if zeros.shape != (groups, out_f):
        raise ValueError(
            f"qzeros unpack to {list(zeros.shape)}, the scales are {list(scales.shape)}"
        )
    zero_plus_one = not awq and args.variant != "gptq_v2"
    if zero_plus_one:
        zeros = zeros + 1
    group = args.group_size or in_f
    if Part.G_IDX in w.parts and not awq:
        g_idx = np.array(view(w.parts[Part.G_IDX])).reshape(-1).astype(np.int64)
    else:
        g_idx = np.arange(in_f) // group
    if g_idx.size != in_f or (g_idx.size and (g_idx.min() < 0 or g_idx.max() >= groups)):
        raise ValueError(f"g_idx names groups outside 0…{groups - 1}")
    codes_cols = w.codes.shape[1] * (32 // bits if awq else 1)
    codes_rows = w.codes.shape[0] * (1 if awq else 32 // bits)
    if (codes_rows, codes_cols) != (in_f, out_f):
        raise ValueError(f"qweight {list(w.codes.shape)} does not hold [{in_f}, {out_f}]")
    return IntPacking(bits, awq, zero_plus_one, g_idx, zeros, scales)


def columns(view_codes: np.ndarray, pack: IntPacking, o0: int, o1: int) -> np.ndarray:
    """The stored words holding outputs ``o0:o1`` (``o0`` a multiple of :data:`STEP`)."""
    if pack.awq:
        per = 32 // pack.bits
        return np.ascontiguousarray(view_codes[:, o0 // per : -(-o1 // per)])
    return np.ascontiguousarray(view_codes[:, o0:o1])


def dequantize(words: np.ndarray, pack: IntPacking, o0: int, o1: int) -> np.ndarray:
    """Outputs ``o0:o1`` as ``[o1 - o0, in]`` F16, as the reference computes them: the F16
    product of the scale and the (exact) code minus zero, rounded once."""
    if pack.awq:
        codes = unpack_along_out(words, pack.bits, True)[:, : o1 - o0]
    else:
        codes = unpack_along_in(words, pack.bits)
    g = pack.g_idx
    diff = (codes - pack.zeros[g, o0:o1]).astype(np.float32)  # [in, n]
    with np.errstate(all="ignore"):
        product = diff * pack.scales[g, o0:o1].astype(np.float32)
    return np.ascontiguousarray(cast_array(product, F32, _F16).T)


_F16 = DTYPES["F16"]
