"""A quantized weight's own figures, beside the statistics of its values: how many of the
possible codes it uses, how many sit at the format's limit (saturated), the range of its
scales and how many scales are 0, negative, inf or NaN (such a block's values are lost)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checkpoint import Checkpoint
from ..formats.burnpack.tensor import BurnQuantInfo
from ..formats.gguf import GgufBlocksInfo
from ..stats import STATS_CHUNK_BYTES, as_float64
from . import burn_qfloat, gguf_blocks, gptq_awq, rows
from .layout import Part, QuantizedWeight
from .schemes import QuantScheme


@dataclass(frozen=True)
class StorageFigures:
    codes_used: int
    codes_possible: int
    saturated: int  # codes at the largest magnitude the format has
    scale_min: float | None
    scale_max: float | None
    bad_scales: int  # 0, negative, inf or NaN (E8M0: the NaN exponent 255)

    def to_json(self) -> dict[str, object]:
        return {
            "codes_used": self.codes_used,
            "codes_possible": self.codes_possible,
            "saturated": self.saturated,
            "scale_min": self.scale_min,
            "scale_max": self.scale_max,
            "bad_scales": self.bad_scales,
        }

    def line(self) -> str:
        if self.codes_possible == -1:  # GGUF types whose scales are not one F16 per block
            return "block scales: not one per block at a fixed place in this type"
        if self.codes_possible == 0:  # GGUF: the blocks' own scales only
            if self.scale_min is None or self.scale_max is None:
                return f"block scales: none finite · {self.bad_scales:,} inf or NaN"
            return (
                f"block scales {self.scale_min:.4g} … {self.scale_max:.4g} · "
                f"{self.bad_scales:,} inf or NaN"
            )
        scales = (
            f"scales {self.scale_min:.4g} … {self.scale_max:.4g}"
            if self.scale_min is not None and self.scale_max is not None
            else "no finite scale"
        )
        return (
            f"codes used {self.codes_used:,} of {self.codes_possible:,} · saturated "
            f"{self.saturated:,} · {scales} · {self.bad_scales:,} bad"
        )


def storage_figures(ckpt: Checkpoint, w: QuantizedWeight) -> StorageFigures:
    plan = rows.prepare(ckpt, w)  # checks the companions: one clear line when they do not fit
    if w.scheme is QuantScheme.GGUF:  # no codes to count: the scales live in the blocks
        values = _block_scales(ckpt, plan)
        if values is None:  # no single scale at a fixed place in these blocks
            return StorageFigures(0, -1, 0, None, None, 0)
        finite = values[np.isfinite(values)]  # ggml's scales may be 0 or negative (Q4_0…)
        low = float(finite.min()) if finite.size else None
        high = float(finite.max()) if finite.size else None
        return StorageFigures(0, 0, 0, low, high, int(values.size - finite.size))
    if plan.burn is not None:  # burn QFloat: the scales follow the codes in one tensor
        return _burn_figures(ckpt, plan)
    counts, possible, top = _code_counts(ckpt, w, plan)
    if plan.bnb4 is not None:  # the scales as bitsandbytes resolves them (nested or not)
        scale_min, scale_max, bad = _float_figures(plan.bnb4.absmax.astype(np.float64))
    else:
        scale_min, scale_max, bad = _scale_figures(ckpt, w)
    return StorageFigures(int((counts > 0).sum()), possible, int(counts[top].sum()), scale_min,
                          scale_max, bad)  # fmt: skip


def _burn_figures(ckpt: Checkpoint, plan: rows.DequantPlan) -> StorageFigures:
    codes_t = plan.weight.codes
    assert plan.burn is not None and isinstance(codes_t, BurnQuantInfo)
    scheme = codes_t.scheme
    low, high = burn_qfloat.code_range(scheme)
    counts = np.zeros(1 << scheme.bits, np.int64)
    offset = 1 << (scheme.bits - 1)
    for raw, r0, r1 in rows.raw_chunks(ckpt, plan, STATS_CHUNK_BYTES):
        codes = burn_qfloat.codes_of(scheme, raw, r1 - r0, plan.cols).astype(np.int64)
        counts += np.bincount((codes + offset).reshape(-1), minlength=1 << scheme.bits)
    scale_min, scale_max, bad = _float_figures(plan.burn.scales.astype(np.float64))
    used = int((counts > 0).sum())
    saturated = int(counts[low + offset] + counts[high + offset])
    return StorageFigures(used, high - low + 1, saturated, scale_min, scale_max, bad)


def _code_counts(
    ckpt: Checkpoint, w: QuantizedWeight, plan: rows.DequantPlan
) -> tuple[np.ndarray, int, list[int]]:
    """A histogram of the stored codes, and the codes of the largest magnitude."""
    args = w.args
    if w.scheme in (QuantScheme.CT_NVFP4, QuantScheme.CT_MXFP4, QuantScheme.MXFP4):
        counts = np.zeros(16, np.int64)
        for raw, _r0, _r1 in rows.raw_chunks(ckpt, plan, STATS_CHUNK_BYTES):
            counts += np.bincount(raw & 0x0F, minlength=16) + np.bincount(raw >> 4, minlength=16)
        return counts, 16, [0x7, 0xF]  # ±6
    if plan.bnb4 is not None:  # two codes a byte; the largest |value| of its quant_map
        counts = np.zeros(16, np.int64)
        for raw, _r0, _r1 in rows.raw_chunks(ckpt, plan, STATS_CHUNK_BYTES):
            counts += np.bincount(raw & 0x0F, minlength=16) + np.bincount(raw >> 4, minlength=16)
        magnitude = np.abs(plan.bnb4.quant_map)
        return counts, 16, [int(i) for i in np.flatnonzero(magnitude == magnitude.max())]
    if plan.packing is not None:  # GPTQ/AWQ: unsigned codes packed in int32
        bits = plan.packing.bits
        counts = np.zeros(1 << bits, np.int64)
        for words, o0, o1 in rows.raw_chunks(ckpt, plan, STATS_CHUNK_BYTES):
            codes = (
                gptq_awq.unpack_along_out(words, bits, True)[:, : o1 - o0]
                if plan.packing.awq
                else gptq_awq.unpack_along_in(words, bits)
            )
            counts += np.bincount(codes.reshape(-1), minlength=1 << bits)
        return counts, 1 << bits, [0, (1 << bits) - 1]
    if w.scheme is QuantScheme.CT_PACK and args is not None:
        bits = args.num_bits
        counts = np.zeros(1 << bits, np.int64)
        for raw, r0, r1 in rows.raw_chunks(ckpt, plan, STATS_CHUNK_BYTES):
            packed = raw.view(np.int32).reshape(r1 - r0, -1)
            values = rows.k.unpack_int32(packed, bits, plan.cols).astype(np.int64)
            counts += np.bincount((values + (1 << (bits - 1))).reshape(-1), minlength=1 << bits)
        return counts, 1 << bits, [0, (1 << bits) - 1]
    counts = np.zeros(256, np.int64)
    for raw, _r0, _r1 in rows.raw_chunks(ckpt, plan, STATS_CHUNK_BYTES):
        counts += np.bincount(raw, minlength=256)
    if w.codes.dtype.name == "F8_E4M3":
        return counts, 254, [0x7E, 0xFE]  # ±448 (0x7F/0xFF are NaN)
    if w.codes.dtype.name == "F8_E5M2":
        return counts, 256, [0x7B, 0xFB]  # ±57344
    return counts, 256, [0x80, 0x7F]  # int8: -128, 127


def _scale_figures(ckpt: Checkpoint, w: QuantizedWeight) -> tuple[float | None, float | None, int]:
    t = w.parts.get(Part.SCALE)
    if t is None:
        return None, None, 0
    raw = np.asarray(ckpt.view(t)).reshape(-1)
    if t.dtype.name == "U8":  # E8M0 exponents
        finite = raw[raw != 0xFF].astype(np.float64) - 127
        values = np.exp2(finite)
        bad = int((raw == 0xFF).sum())
    else:
        return _float_figures(as_float64(raw))
    if values.size == 0:
        return None, None, bad
    return float(values.min()), float(values.max()), bad


def _float_figures(values: np.ndarray) -> tuple[float | None, float | None, int]:
    ok = np.isfinite(values) & (values > 0)
    good = values[ok]
    if good.size == 0:
        return None, None, int((~ok).sum())
    return float(good.min()), float(good.max()), int((~ok).sum())


def _block_scales(ckpt: Checkpoint, plan: rows.DequantPlan) -> np.ndarray | None:
    """Every GGUF block's F16 scale ``d`` as F64, read a block of rows at a time; None for the
    block types whose scale is not one F16 at a fixed place."""
    w = plan.weight
    assert isinstance(w.codes, GgufBlocksInfo)
    ggml = w.codes.ggml
    off = gguf_blocks.D_OFFSET.get(ggml.name)
    if off is None:
        return None
    parts = []
    for raw, _r0, _r1 in rows.raw_chunks(ckpt, plan, STATS_CHUNK_BYTES):
        blocks = raw.reshape(-1, ggml.type_size)
        parts.append(np.ascontiguousarray(blocks[:, off : off + 2]).view("<f2").reshape(-1))
    return np.concatenate(parts).astype(np.float64) if parts else np.empty(0)
