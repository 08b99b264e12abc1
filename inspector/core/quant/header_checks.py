"""Why a quantized weight cannot be dequantized, from its header alone.

These checks read no byte of data: only the codes' and companions' dtypes and shapes, the
config's arguments and which companions are there. So recognising a checkpoint runs them
(``recognise``), and ``list``, ``check`` and the window say a cast refuses before one is tried;
the cast itself refuses with the same words (``rows.prepare``), then checks what only the
companions' values can tell (``weight_shape``, ``g_idx``, a quant state).
"""

from __future__ import annotations

import math

from ..layout import StridedTensorInfo, TensorInfo
from ..wording import _q
from . import bnb, gguf_blocks
from .layout import Part, QuantizedWeight, WeightArgs
from .schemes import QuantScheme

_FP4 = (QuantScheme.CT_NVFP4, QuantScheme.CT_MXFP4)


def header_refusal(w: QuantizedWeight) -> str | None:
    """Why a cast cannot dequantize ``w`` exactly, or None when its header fits (its
    companions' values are checked when they are read)."""
    if not w.scheme.dequantizable:
        return "this scheme cannot be dequantized by this tool yet"
    if isinstance(w.codes, StridedTensorInfo) or len(w.codes.shape) < 1:
        return "codes are not a plain row-major tensor"
    if w.scheme is QuantScheme.GGUF:  # the scales are inside the blocks
        if w.block_type not in gguf_blocks.dequantizable_types():
            return f"the gguf package cannot dequantize {w.block_type}"
        return None
    if w.scheme is QuantScheme.BURN:  # the scales follow the values in the same tensor
        return None
    scale_t = w.parts.get(Part.SCALE)
    if scale_t is None:
        return "no scale tensor"
    if bnb.is_bnb(w) or w.scheme in (QuantScheme.GPTQ, QuantScheme.AWQ):
        return None  # their arguments are in a quant state or packed tensors: read first
    assert w.args is not None
    if w.scheme is QuantScheme.MXFP4:
        return _gpt_oss(w, scale_t)
    return _scale_shape(w, w.args, scale_t) or _dtypes(w, w.args, scale_t)


def _gpt_oss(w: QuantizedWeight, scale_t: TensorInfo) -> str | None:
    shape = tuple(w.codes.shape)
    if len(shape) != 4 or shape[3] != 16 or tuple(scale_t.shape) != shape[:3]:
        return f"blocks {list(shape)} and scales {list(scale_t.shape)} are not gpt-oss's"
    if w.codes.dtype.name != "U8" or scale_t.dtype.name != "U8":
        return "gpt-oss MXFP4 stores blocks and scales as U8"
    return None


def _scale_shape(w: QuantizedWeight, args: WeightArgs, scale_t: TensorInfo) -> str | None:
    """The scales' shape against the one the strategy gives the logical weight."""
    shape = w.shape
    cols = shape[-1]
    if args.strategy == "block":
        if len(shape) != 2 or args.block is None:
            return "block scales need a 2-D weight"
        want = [math.ceil(shape[0] / args.block[0]), math.ceil(shape[1] / args.block[1])]
    elif args.strategy in ("group", "tensor_group"):
        if cols % (args.group_size or 1):  # compressed-tensors refuses to dequantize it too
            return f"{cols:,} columns are not a multiple of the group size {args.group_size}"
        want = [*shape[:-1], math.ceil(cols / (args.group_size or 1))]
    elif args.strategy == "channel":
        want = [*shape[:-1], 1]
    else:
        want = [1]
    got = list(scale_t.shape)
    if math.prod(got) != math.prod(want) or (args.strategy != "tensor" and got != want):
        return (
            f"scale {_q(scale_t.name)} is {got}, the weight {list(shape)} with "
            f"{args.describe()} needs {want}"
        )
    return None


def _dtypes(w: QuantizedWeight, args: WeightArgs, scale_t: TensorInfo) -> str | None:
    """The codes', scales' and zero points' dtypes and ranks each scheme's reference reads."""
    codes, scale = w.codes.dtype.name, scale_t.dtype.name
    if w.scheme is QuantScheme.FP8_BLOCK:
        if scale != "F32":
            return f"weight_scale_inv is {scale}, not F32"
        return None if codes in ("F8_E4M3", "F8_E5M2") else f"codes are {codes}, not FP8"
    if w.scheme in _FP4:
        return _fp4(w, scale_t)
    if scale not in ("F32", "BF16", "F16"):
        return f"scales are {scale}"
    want_codes = ("F8_E4M3", "F8_E5M2") if w.scheme is QuantScheme.CT_FLOAT else ("I8",)
    if w.scheme is QuantScheme.CT_PACK:
        want_codes = ("I32",)
        if Part.SHAPE not in w.parts:  # compressed-tensors unpacks only with weight_shape
            return "packed codes without weight_shape"
        if len(w.shape) < 2:  # unpack_from_int32 reads rows of words: it raises on one dimension
            return "packed codes of one dimension (compressed-tensors unpacks rows)"
        if not 1 <= args.num_bits <= 8:  # compressed-tensors unpacks 1 to 8 bits only
            return f"{args.num_bits}-bit packing (compressed-tensors packs 1 to 8 bits)"
        words, held = -(-w.shape[-1] * args.num_bits // 32), w.codes.shape[-1]
        if words != held:  # with groups the scales give the columns: they must fill the words
            return (
                f"the scales say {w.shape[-1]:,} columns ({args.describe()}), which fill "
                f"{words:,} word{'s' * (words != 1)} of int{args.num_bits} a row; the packed "
                f"codes hold {held:,} ({held * 32 // args.num_bits:,} columns)"
            )
    if codes not in want_codes:
        return f"codes are {codes}, {w.scheme.value} stores {'/'.join(want_codes)}"
    return _zero_point(w, args, scale_t)


def _fp4(w: QuantizedWeight, scale_t: TensorInfo) -> str | None:
    if len(w.shape) != 2:  # compressed-tensors' FP4 unpacking raises on anything else
        return (
            f"FP4 codes of {len(w.shape)} dimensions (compressed-tensors unpacks FP4 matrices only)"
        )
    if w.codes.dtype.name != "U8":
        return f"packed codes are {w.codes.dtype.name}, not U8"
    scale = scale_t.dtype.name
    if w.scheme is QuantScheme.CT_MXFP4:
        return None if scale == "U8" else f"MXFP4 scales are {scale}, not U8 exponents"
    gs = w.parts.get(Part.GLOBAL_SCALE)
    if gs is None or gs.dtype.name != "F32" or gs.numel != 1:
        return "NVFP4 needs one F32 weight_global_scale"
    if scale not in ("F8_E4M3", "BF16", "F16", "F32"):
        return f"NVFP4 scales are {scale}"
    return None


def _zero_point(w: QuantizedWeight, args: WeightArgs, scale_t: TensorInfo) -> str | None:
    zp_t = w.parts.get(Part.ZERO_POINT)
    if zp_t is None:
        return None
    if w.scheme is QuantScheme.CT_PACK and not args.symmetric:  # packed along the rows
        if len(w.shape) != 2:  # packed along dim 0 of each 2-D slice: not followed yet
            return "packed zero points of a weight with more than 2 dimensions"
        if zp_t.dtype.name != "I32" or len(zp_t.shape) != 2:
            return "packed zero points are not I32 [rows, groups]"
        need = -(-w.shape[0] * args.num_bits // 32)  # words a column for the weight's rows
        if zp_t.shape[0] < need:
            return (
                f"packed zero point {_q(zp_t.name)} holds {zp_t.shape[0]:,} words a column; "
                f"{w.shape[0]:,} rows of int{args.num_bits} need {need:,}"
            )
        if tuple(zp_t.shape[1:]) == tuple(scale_t.shape[-1:]):  # a column a group (as
            return None  # compressed-tensors reads them); the rows are read in rows.prepare
    elif zp_t.numel == scale_t.numel:
        return None
    return f"zero point {_q(zp_t.name)} does not match its scale's shape"
