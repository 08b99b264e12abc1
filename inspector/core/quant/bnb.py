"""bitsandbytes weights as transformers saves them, dequantized as bitsandbytes does on the CPU.

* 4-bit (nf4/fp4): ``weight`` U8 holds two 4-bit codes a byte (the first in the high nibble);
  ``weight.quant_map`` [16] F32 the values of the codes; ``weight.absmax`` one scale per
  ``blocksize`` values, F32, or (nested, "double quant") U8 codes of ``nested_quant_map`` times
  ``nested_absmax`` per ``nested_blocksize`` plus ``nested_offset``; the JSON in
  ``weight.quant_state.bitsandbytes__<type>`` gives the shape, dtype and block sizes. Values:
  ``quant_map[code] * absmax[i // blocksize]`` in F32, then rounded to that dtype.
* 8-bit (LLM.int8): ``weight`` I8 [out, in] and ``SCB`` F32 [out]: ``code * SCB * (1/127)``,
  each product in F32 (``int8_vectorwise_dequant``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..dtypes import DTYPES, DType
from ..layout import TensorInfo
from .layout import Part, QuantizedWeight
from .schemes import QuantScheme

RECIPROCAL_127 = np.float32(7.874015718698502e-3)
_DTYPE_NAMES = {"bfloat16": "BF16", "float16": "F16", "float32": "F32"}
MAX_STATE_BYTES = 64 << 10


@dataclass
class Bnb4:
    shape: tuple[int, ...]
    dtype: DType
    blocksize: int
    quant_map: np.ndarray  # [16] F32
    absmax: np.ndarray  # F32, one per block


def _part(w: QuantizedWeight, suffix: str) -> TensorInfo | None:
    name = w.name + suffix
    return next((t for t in w.others if t.name == name), None)


def read_state(view: Callable[[TensorInfo], np.ndarray], w: QuantizedWeight) -> dict:
    """The quant_state JSON bitsandbytes packs into a U8 tensor."""
    t = next((t for t in w.others if ".quant_state.bitsandbytes__" in t.name), None)
    if t is None or t.dtype.name != "U8" or t.nbytes > MAX_STATE_BYTES:
        raise ValueError("no readable weight.quant_state.bitsandbytes__* entry")
    try:
        state = json.loads(bytes(np.asarray(view(t)).reshape(-1)).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ValueError("its quant_state is not the JSON bitsandbytes writes") from None
    if not isinstance(state, dict):
        raise ValueError("its quant_state is not a JSON object")
    return state


def logical_shape(state: dict) -> tuple[int, ...]:
    shape = state.get("shape")
    if not (isinstance(shape, list) and shape and all(type(v) is int and v >= 0 for v in shape)):
        raise ValueError(f"quant_state shape {shape!r}")
    return tuple(shape)


def prepare_4bit(view: Callable[[TensorInfo], np.ndarray], w: QuantizedWeight) -> Bnb4:
    state = read_state(view, w)
    shape = logical_shape(state)
    dtype_name = _DTYPE_NAMES.get(str(state.get("dtype")))
    blocksize = state.get("blocksize")
    if dtype_name is None or type(blocksize) is not int or blocksize <= 0:
        raise ValueError(f"quant_state dtype {state.get('dtype')!r}, blocksize {blocksize!r}")
    if shape[-1] % 2:
        raise ValueError("an odd last dimension (bitsandbytes reads it by another kernel)")
    n = math.prod(shape)
    if w.codes.dtype.name != "U8" or w.codes.numel * 2 != n:
        raise ValueError(f"{w.codes.numel:,} code bytes do not hold {n:,} 4-bit values")
    quant_map_t = _part(w, ".quant_map")
    absmax_t = w.parts.get(Part.SCALE)  # weight.absmax
    if quant_map_t is None or absmax_t is None:
        raise ValueError("needs weight.absmax and weight.quant_map")
    quant_map = np.asarray(view(quant_map_t), dtype=np.float32).reshape(-1)
    absmax = np.asarray(view(absmax_t)).reshape(-1)
    blocks = -(-n // blocksize)
    if quant_map.size != 16 or absmax.size != blocks:
        raise ValueError(f"quant_map [{quant_map.size}] and absmax [{absmax.size}] for "
                         f"{blocks:,} blocks")  # fmt: skip
    if absmax_t.dtype.name == "U8":  # nested: the scales are themselves 8-bit blockwise codes
        absmax = _nested_absmax(view, w, state, absmax)
    elif absmax_t.dtype.name != "F32":
        raise ValueError(f"absmax is {absmax_t.dtype.name}")
    return Bnb4(shape, DTYPES[dtype_name], blocksize, quant_map, absmax.astype(np.float32))


def _nested_absmax(view, w: QuantizedWeight, state: dict, codes: np.ndarray) -> np.ndarray:
    nested_map_t, nested_absmax_t = _part(w, ".nested_quant_map"), _part(w, ".nested_absmax")
    block, offset = state.get("nested_blocksize"), state.get("nested_offset")
    if nested_map_t is None or nested_absmax_t is None or type(block) is not int or block <= 0:
        raise ValueError("nested absmax without nested_quant_map, nested_absmax or blocksize")
    if not isinstance(offset, (int, float)):
        raise ValueError(f"nested_offset {offset!r}")
    nested_map = np.asarray(view(nested_map_t), dtype=np.float32).reshape(-1)
    nested_absmax = np.asarray(view(nested_absmax_t), dtype=np.float32).reshape(-1)
    if nested_map.size != 256 or nested_absmax.size != -(-codes.size // block):
        raise ValueError("nested_quant_map or nested_absmax do not fit the absmax codes")
    scales = nested_map[codes] * np.repeat(nested_absmax, block)[: codes.size]
    return scales + np.float32(offset)  # F32, as dequantize_blockwise and + offset do


def dequantize_4bit(raw: np.ndarray, pack: Bnb4, e0: int, e1: int) -> np.ndarray:
    """Values ``e0:e1`` of the flat weight (both even) from their code bytes, in its dtype."""
    from .kernels import F32, cast_array

    codes = np.empty(e1 - e0, np.uint8)
    codes[0::2] = raw >> 4
    codes[1::2] = raw & 0x0F
    scale = np.repeat(pack.absmax, pack.blocksize)[e0:e1] if e1 > e0 else np.empty(0, np.float32)
    with np.errstate(all="ignore"):
        values = pack.quant_map[codes] * scale
    return cast_array(values, F32, pack.dtype)


def dequantize_8bit(codes: np.ndarray, scb: np.ndarray) -> np.ndarray:
    """``int8_vectorwise_dequant``: ``A * stats * (1/127)``, each product rounded to F32."""
    with np.errstate(all="ignore"):
        return codes.astype(np.float32) * scb[:, None] * RECIPROCAL_127


def is_bnb(w: QuantizedWeight) -> bool:
    return w.scheme in (QuantScheme.BNB_4BIT, QuantScheme.BNB_8BIT)
