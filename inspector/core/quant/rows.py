"""A quantized weight dequantized a block of rows at a time, read straight from its file.

``DequantPlan.prepare`` reads the small companions once (scales, zero points, global scale,
``weight_shape``) and checks them against the codes; ``chunks`` then reads the codes of a
few rows at a time with ``readinto`` (resident memory: one block of rows, never the tensor)
and yields the rows dequantized in the reference's compute dtype.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..checkpoint import Checkpoint, read_byte_chunks
from ..dtypes import DTYPES, DType
from ..errors import CheckpointError
from ..formats.burnpack.tensor import BurnQuantInfo
from ..layout import TensorInfo
from ..wording import _q
from . import bnb, burn_qfloat, gguf_blocks, gptq_awq
from . import kernels as k
from .header_checks import header_refusal
from .layout import Part, QuantizedWeight
from .schemes import QuantScheme

F32, F64, BF16, F16 = DTYPES["F32"], DTYPES["F64"], DTYPES["BF16"], DTYPES["F16"]


@dataclass
class DequantPlan:
    weight: QuantizedWeight
    compute: DType  # the dtype the reference's result is in (cast to the target after)
    rows: int  # logical rows (leading dims flattened)
    cols: int
    scale: np.ndarray  # as stored, rows flattened like the codes
    scale_dtype: DType
    zero_point: np.ndarray | None = None
    global_scale: np.float32 | None = None
    packing: gptq_awq.IntPacking | None = None  # GPTQ/AWQ: codes gathered by output columns
    bnb4: bnb.Bnb4 | None = None  # bitsandbytes 4-bit: its quant state
    head_rows: int = 0  # GGUF's permuted Q/K: rows put back in HF order, a head at a time
    burn: burn_qfloat.BurnRows | None = None  # burn QFloat: value bytes a row, block scales

    @property
    def shape(self) -> tuple[int, ...]:
        return self.weight.shape


def _small(ckpt: Checkpoint, t: TensorInfo, limit: int = 1 << 30) -> np.ndarray:
    if t.nbytes > limit:
        raise CheckpointError(t.file, f"companion {_q(t.name)} is over 1 GiB")
    return np.array(ckpt.view(t))  # a copy: the map is released with the checkpoint


def _refuse(w: QuantizedWeight, why: str) -> CheckpointError:
    return CheckpointError(w.codes.file, f"{_q(w.name)} ({w.scheme.label}): {why}")


def prepare(ckpt: Checkpoint, w: QuantizedWeight) -> DequantPlan:
    """Check ``w``'s header, then read and check its companions; raise one clear line when
    they do not fit."""
    if (why := header_refusal(w)) is not None:
        raise _refuse(w, why)
    if w.scheme is QuantScheme.GGUF:  # the scales are inside the blocks
        rows = math.prod(w.shape[:-1]) if len(w.shape) > 1 else 1
        return DequantPlan(w, F32, rows, w.shape[-1] if w.shape else 1, np.empty(0), F32)
    if w.scheme is QuantScheme.BURN:  # the scales follow the values in the same tensor
        return _burn_plan(ckpt, w)
    scale_t = w.parts[Part.SCALE]
    if bnb.is_bnb(w):  # its arguments are in a quant_state, not a config group
        return _bnb_plan(ckpt, w, scale_t)
    args = w.args
    assert args is not None
    shape = w.shape
    if w.scheme in (QuantScheme.GPTQ, QuantScheme.AWQ):
        try:
            packing = gptq_awq.prepare(lambda t: _small(ckpt, t), w)
        except ValueError as e:
            raise _refuse(w, str(e)) from None
        return DequantPlan(w, F16, shape[0], shape[1], packing.scales, scale_t.dtype,
                           packing=packing)  # fmt: skip
    if Part.SHAPE in w.parts:
        stored = _small(ckpt, w.parts[Part.SHAPE]).reshape(-1)
        if stored.dtype.kind not in "iu" or [int(v) for v in stored] != list(shape):
            raise _refuse(w, f"weight_shape {stored.tolist()} disagrees with the packed codes "
                             f"{list(w.codes.shape)} (logical {list(shape)})")  # fmt: skip
    if Part.G_IDX in w.parts:
        g_idx = _small(ckpt, w.parts[Part.G_IDX]).reshape(-1)
        trivial = np.arange(g_idx.size) // (args.group_size or 1)
        if g_idx.size != shape[-1] or not np.array_equal(g_idx, trivial):
            raise _refuse(w, "activation-ordered groups (weight_g_idx) are not dequantized yet")
    scale = _small(ckpt, scale_t)
    scale_dtype = scale_t.dtype
    if w.scheme is QuantScheme.MXFP4:  # one expert a "row": its output is transposed
        experts = w.codes.shape[0]
        return DequantPlan(w, BF16, experts, math.prod(w.codes.shape[1:]) * 2,
                           scale.reshape(experts, -1), scale_dtype)  # fmt: skip
    cols = shape[-1]
    rows = math.prod(shape[:-1])
    if args.strategy not in ("block", "tensor"):
        scale = scale.reshape(rows, max(1, scale.size // max(1, rows)))
    plan = DequantPlan(w, F32, rows, cols, scale, scale_dtype)
    if w.scheme is QuantScheme.FP8_BLOCK:
        return plan
    if w.scheme in (QuantScheme.CT_NVFP4, QuantScheme.CT_MXFP4):
        plan.compute = BF16
        if w.scheme is QuantScheme.CT_NVFP4:
            plan.global_scale = np.float32(_small(ckpt, w.parts[Part.GLOBAL_SCALE]).reshape(-1)[0])
        return plan
    plan.compute = scale_dtype
    zp_t = w.parts.get(Part.ZERO_POINT)
    if zp_t is not None:
        zp = _small(ckpt, zp_t)
        if w.scheme is QuantScheme.CT_PACK and not args.symmetric:  # packed along the rows
            zp = k.unpack_int32_rows(zp, args.num_bits, rows)
        plan.zero_point = zp.reshape(scale.shape) if zp.size == scale.size else None
        if plan.zero_point is None:
            raise _refuse(w, f"zero point {_q(zp_t.name)} does not match its scale's shape")
    return plan


def _burn_plan(ckpt: Checkpoint, w: QuantizedWeight) -> DequantPlan:
    t = w.codes
    assert isinstance(t, BurnQuantInfo)
    shape = t.logical
    values_len = t.scheme.values_len(shape)
    if t.nbytes - values_len > 1 << 30:
        raise _refuse(w, "its scales are over 1 GiB")
    tail = np.array(ckpt.view(t)[values_len:]) if t.nbytes > values_len else np.empty(0, np.uint8)
    try:
        rows = burn_qfloat.prepare(t.scheme, shape, tail)
    except ValueError as e:
        raise _refuse(w, f"{t.scheme.describe()}: {e}") from None
    n_rows = math.prod(shape[:-1]) if len(shape) > 1 else 1
    cols = shape[-1] if shape else 1
    plan = DequantPlan(w, F32, n_rows, cols, np.empty(0, np.float32), F32, burn=rows)
    if rows.zero_scales:  # the codes of such blocks read once, before any value is used
        try:
            for raw, r0, r1 in raw_chunks(ckpt, plan, 1 << 24):
                burn_qfloat.check_zero_blocks(t.scheme, shape, rows, raw, r0, r1)
        except ValueError as e:
            raise _refuse(w, f"{t.scheme.describe()}: {e}") from None
    return plan


def _bnb_plan(ckpt: Checkpoint, w: QuantizedWeight, scale_t: TensorInfo) -> DequantPlan:
    view = lambda t: _small(ckpt, t)  # noqa: E731
    try:
        if w.scheme is QuantScheme.BNB_4BIT:
            state = bnb.prepare_4bit(view, w)
            shape = state.shape
            rows = math.prod(shape[:-1]) if len(shape) > 1 else 1
            return DequantPlan(w, state.dtype, rows, shape[-1], state.absmax, F32, bnb4=state)
        if w.codes.dtype.name != "I8" or len(w.codes.shape) != 2 or scale_t.dtype.name != "F32":
            raise ValueError("LLM.int8 stores I8 [out, in] codes and F32 SCB")
        scb = view(scale_t).reshape(-1)
        if scb.size != w.codes.shape[0]:
            raise ValueError(f"SCB [{scb.size}] for {w.codes.shape[0]:,} rows")
        return DequantPlan(w, F32, w.codes.shape[0], w.codes.shape[1], scb, F32)
    except ValueError as e:
        raise _refuse(w, str(e)) from None


def rows_per_chunk(plan: DequantPlan, chunk_bytes: int) -> int:
    step = max(1, chunk_bytes // max(1, plan.cols * 4))
    if plan.head_rows:  # whole heads, to put their rows back in order
        return max(plan.head_rows, step - step % plan.head_rows)
    if plan.packing is not None:  # whole int32 words of outputs
        return max(gptq_awq.STEP, step - step % gptq_awq.STEP)
    block = plan.weight.args.block if plan.weight.args else None
    if block is not None and step > block[0]:
        step -= step % block[0]  # whole blocks of rows: one scale row per block row
    return step


def raw_chunks(
    ckpt: Checkpoint, plan: DequantPlan, chunk_bytes: int
) -> Iterator[tuple[np.ndarray, int, int]]:
    """The stored bytes of the codes, a block of rows at a time: ``(bytes, r0, r1)``; each
    array is new (the dequantization may run on another thread)."""
    t = plan.weight.codes
    step = rows_per_chunk(plan, chunk_bytes)
    if plan.packing is not None:  # output rows are columns of the stored codes
        codes = ckpt.view(t)
        for o0 in range(0, plan.rows, step):
            o1 = min(plan.rows, o0 + step)
            yield gptq_awq.columns(codes, plan.packing, o0, o1), o0, o1
        return
    row_bytes = plan.burn.row_bytes if plan.burn is not None else t.nbytes // max(1, plan.rows)
    start, _end = ckpt.byte_range(t)
    try:
        fh = open(t.file, "rb", buffering=0)  # noqa: SIM115 - closed below
    except OSError as e:
        raise CheckpointError(t.file, f"cannot read: {e.strerror or e}") from None
    with fh:
        for r0 in range(0, plan.rows, step):
            r1 = min(plan.rows, r0 + step)
            lo, hi = start + r0 * row_bytes, start + r1 * row_bytes
            if hi > lo:
                raw = next(read_byte_chunks(fh, t.file, lo, hi, hi - lo))
            else:
                raw = np.empty(0, np.uint8)
            yield raw, r0, r1


def chunks(ckpt: Checkpoint, plan: DequantPlan, chunk_bytes: int) -> Iterator[np.ndarray]:
    """The rows of the logical weight, dequantized, in order, ``chunk_bytes`` of F32 at most."""
    for raw, r0, r1 in raw_chunks(ckpt, plan, chunk_bytes):
        yield dequantize_rows(plan, raw, r0, r1)


def dequantize_rows(plan: DequantPlan, raw: np.ndarray, r0: int, r1: int) -> np.ndarray:
    """Rows ``r0:r1`` (their stored bytes in ``raw``) as the reference computes them."""
    w, n, cols = plan.weight, r1 - r0, plan.cols
    if w.scheme is QuantScheme.GGUF:
        values = gguf_blocks.dequantize_rows(w, raw, n)
        if plan.head_rows:  # llama's Q/K: each head's interleaved halves put back
            heads = values.reshape(-1, plan.head_rows // 2, 2, cols)
            values = np.ascontiguousarray(heads.swapaxes(1, 2)).reshape(n, cols)
        return values
    if plan.burn is not None:
        assert isinstance(w.codes, BurnQuantInfo)
        return burn_qfloat.dequantize_rows(w.codes.scheme, w.shape, plan.burn, raw, r0, r1)
    if plan.bnb4 is not None:
        return bnb.dequantize_4bit(raw, plan.bnb4, r0 * cols, r1 * cols).reshape(n, cols)
    if w.scheme is QuantScheme.BNB_8BIT:
        return bnb.dequantize_8bit(raw.view(np.int8).reshape(n, cols), plan.scale[r0:r1])
    args = w.args
    assert args is not None
    if w.scheme is QuantScheme.MXFP4:
        return _gpt_oss_rows(plan, raw, r0, r1)
    if plan.packing is not None:
        return gptq_awq.dequantize(raw, plan.packing, r0, r1)
    if w.scheme in (QuantScheme.CT_NVFP4, QuantScheme.CT_MXFP4):
        codes = k.unpack_fp4(raw.reshape(n, -1))[:, :cols]
        s = k.expand_groups(plan.scale[r0:r1], cols, args.group_size or cols)
        if w.scheme is QuantScheme.CT_NVFP4:
            assert plan.global_scale is not None
            return k.ct_nvfp4(codes, s, plan.scale_dtype, plan.global_scale)
        return k.ct_mxfp4(codes, s)
    if w.scheme is QuantScheme.CT_PACK:
        codes_f32 = k.unpack_int32(raw.view(np.int32).reshape(n, -1), args.num_bits, cols)
        codes_f32 = codes_f32.astype(np.float32)
    else:
        codes = raw.view(w.codes.dtype.numpy).reshape(n, cols)
        codes_f32 = k.to_f32(codes, w.codes.dtype)
    if w.scheme is QuantScheme.FP8_BLOCK and args.block is not None:
        return _fp8_block_rows(plan, codes_f32, r0, r1)
    s, zp = _scales_for_rows(plan, r0, r1)
    if w.scheme is QuantScheme.FP8_BLOCK:
        return k.fp8_block(codes_f32, F32, s)
    return k.ct_linear(codes_f32, s, plan.scale_dtype, zp)


def _gpt_oss_rows(plan: DequantPlan, raw: np.ndarray, r0: int, r1: int) -> np.ndarray:
    """transformers' ``convert_moe_packed_tensors`` for experts ``r0:r1``: ``torch.ldexp`` of
    the FP4 value by ``e - 127`` (exact, as ldexp is: 0.5·2**128 is 2**127, 0·2**128 is 0; the
    exact product in F64, then rounded to BF16 as torch rounds), rows and columns swapped."""
    _, rows, groups, _ = plan.weight.codes.shape
    n = r1 - r0
    codes = k.unpack_fp4(raw.reshape(n, rows, groups * 16))  # [n, rows, groups·32]
    exps = plan.scale[r0:r1].reshape(n, rows, groups).astype(np.int32) - 127
    scaled = np.ldexp(codes.reshape(n, rows, groups, 32).astype(np.float64), exps[..., None])
    values = k.cast_array(scaled.reshape(n, rows, groups * 32), F64, BF16)
    return np.ascontiguousarray(values.transpose(0, 2, 1))


def _fp8_block_rows(plan: DequantPlan, codes_f32: np.ndarray, r0: int, r1: int) -> np.ndarray:
    """The F32 product, one row of blocks at a time: a row of scales widened to the columns
    once per block row (not a scale per element)."""
    args = plan.weight.args
    assert args is not None and args.block is not None
    bm, bn = args.block
    out = codes_f32  # a new array (the codes widened): multiplied in place
    r = r0
    while r < r1:
        end = min(r1, (r // bm + 1) * bm)
        s_cols = np.repeat(plan.scale[r // bm], bn)[: plan.cols]
        with np.errstate(all="ignore"):
            np.multiply(out[r - r0 : end - r0], s_cols, out=out[r - r0 : end - r0])
        r = end
    return out


def _scales_for_rows(plan: DequantPlan, r0: int, r1: int) -> tuple[np.ndarray, np.ndarray | None]:
    args, cols = plan.weight.args, plan.cols
    assert args is not None
    zp = plan.zero_point
    if args.strategy == "block":
        assert args.block is not None
        s = k.expand_blocks(plan.scale, r0, r1, cols, args.block)
        z = k.expand_blocks(zp, r0, r1, cols, args.block) if zp is not None else None
        return s, z
    if args.strategy in ("group", "tensor_group"):
        g = args.group_size or cols
        s = k.expand_groups(plan.scale[r0:r1], cols, g)
        return s, (k.expand_groups(zp[r0:r1], cols, g) if zp is not None else None)
    if args.strategy == "channel":
        return plan.scale[r0:r1], (zp[r0:r1] if zp is not None else None)
    return plan.scale.reshape(1, 1), (zp.reshape(1, 1) if zp is not None else None)
