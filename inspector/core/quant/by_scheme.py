"""Each scheme's tensors as its ``quantization_config`` describes them: which stored tensors
are the codes of which logical weight, its companions, its logical shape, and every mismatch
between the config and the tensors (a problem line). Header only: names, dtypes and shapes."""

from __future__ import annotations

import math

from ..layout import TensorInfo
from ..wording import _q
from .config_groups import (
    ConfigProblem,
    CtGroup,
    ct_group_of,
    ct_groups,
    ct_ignored,
    not_converted,
)
from .header_checks import header_refusal
from .layout import Part, QuantizedWeight, QuantLayout, WeightArgs
from .schemes import QuantScheme

_CT_SCHEMES = {
    "float-quantized": QuantScheme.CT_FLOAT,
    "int-quantized": QuantScheme.CT_INT,
    "naive-quantized": QuantScheme.CT_INT,
    "pack-quantized": QuantScheme.CT_PACK,
    "nvfp4-pack-quantized": QuantScheme.CT_NVFP4,
    "mxfp4-pack-quantized": QuantScheme.CT_MXFP4,
}
_CT_PARTS = {
    "weight_scale": Part.SCALE,
    "weight_zero_point": Part.ZERO_POINT,
    "weight_global_scale": Part.GLOBAL_SCALE,
    "weight_shape": Part.SHAPE,
    "weight_g_idx": Part.G_IDX,
}
# activation and kv-cache parameters of a quantized module: not part of its weight's values
_CT_OTHER = ("input_scale", "input_zero_point", "input_global_scale", "output_scale")
FP8_DTYPES = ("F8_E4M3", "F8_E5M2")


def module_of(name: str, suffix: str) -> str | None:
    return name[: -len(suffix)] if name.endswith(suffix) else None


# -- transformers / DeepSeek fp8 -------------------------------------------------------------------


def fp8_block(by_name: dict[str, TensorInfo], qc: dict, confirmed: bool) -> QuantLayout:
    block = qc.get("weight_block_size")
    if block is not None:
        if not (isinstance(block, list) and len(block) == 2 and all(
            isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block
        )):  # fmt: skip
            raise ConfigProblem(f"quantization_config weight_block_size is {block!r}")
        block = (block[0], block[1])
    layout = QuantLayout("FP8 block-scaled (quant_method fp8)", confirmed)
    skip = qc.get("modules_to_not_convert")
    for name, scale in by_name.items():
        m = module_of(name, ".weight_scale_inv")
        if m is None:
            continue
        codes = by_name.get(m + ".weight")
        if codes is None:
            layout.problems.append(f"scale {name!r} has no weight {m + '.weight'!r}")
            continue
        args = WeightArgs(8, "float", "block" if block else "tensor", block=block)
        w = QuantizedWeight(m + ".weight", QuantScheme.FP8_BLOCK, codes, tuple(codes.shape),
                            {Part.SCALE: scale}, args)  # fmt: skip
        for other in ("input_scale", "activation_scale"):
            if (t := by_name.get(f"{m}.{other}")) is not None:
                w.others.append(t)
        layout.add(w)
        if codes.dtype.name not in FP8_DTYPES:
            layout.problems.append(f"{codes.name!r} is {codes.dtype.name}, not FP8")
        elif len(codes.shape) != 2:
            layout.problems.append(f"{codes.name!r} has {len(codes.shape)} dimensions, not 2")
        else:
            want = [math.ceil(codes.shape[0] / block[0]), math.ceil(codes.shape[1] / block[1])] \
                if block else [1]  # fmt: skip
            if scale.dtype.name != "F32" or (list(scale.shape) != want and not (
                not block and math.prod(scale.shape) == 1
            )):  # fmt: skip
                layout.problems.append(
                    f"scale {name!r} is {scale.dtype.name} {list(scale.shape)}; weight "
                    f"{list(codes.shape)} with blocks {list(block or [])} needs F32 {want}"
                )
        if not_converted(m, skip):
            layout.problems.append(
                f"{codes.name!r} is quantized but modules_to_not_convert names it"
            )
    for name, t in by_name.items():  # FP8 weights without a scale would be cast as values
        if t.dtype.name in FP8_DTYPES and name not in layout.part_of:
            layout.problems.append(f"FP8 tensor {name!r} has no weight_scale_inv")
    return layout


# -- compressed-tensors ----------------------------------------------------------------------------


def compressed_tensors(by_name: dict[str, TensorInfo], qc: dict) -> QuantLayout:
    groups = ct_groups(qc)
    formats = sorted({g.format for g in groups})
    layout = QuantLayout(f"compressed-tensors {'/'.join(formats)}", True)
    ignore = qc.get("ignore")
    seen: set[str] = set()
    for name in by_name:
        m = module_of(name, ".weight_packed") or module_of(name, ".weight_scale")
        if m is None or m in seen:
            continue
        seen.add(m)
        packed = by_name.get(m + ".weight_packed")
        codes = packed or by_name.get(m + ".weight")
        group = ct_group_of(m, groups, lambda g, c=codes, p=packed: _fits(g, c, p is not None))
        if group is None or codes is None:
            layout.problems.append(f"{name!r} belongs to no quantization group of the config")
            continue
        scheme = _CT_SCHEMES[group.format]
        if scheme is QuantScheme.CT_INT and group.args.kind == "float":  # naive FP8 weight-only
            scheme = QuantScheme.CT_FLOAT
        if (packed is not None) != (scheme in _PACKED):
            layout.problems.append(
                f"{codes.name!r} is stored as {'packed' if packed else 'codes'}, but its group "
                f"{group.name!r} says {group.format}"
            )
            continue
        w = QuantizedWeight(m + ".weight", scheme, codes, (), {}, group.args)
        for suffix, part in _CT_PARTS.items():
            if (t := by_name.get(f"{m}.{suffix}")) is not None:
                w.parts[part] = t
        w.others = [t for s in _CT_OTHER if (t := by_name.get(f"{m}.{s}")) is not None]
        w.shape = _ct_logical_shape(w)
        layout.add(w)
        if ct_ignored(m, ignore):
            layout.problems.append(f"{codes.name!r} is quantized but the config's ignore names it")
        scale = w.parts.get(Part.SCALE)
        if scale is None:
            layout.problems.append(f"{codes.name!r} has no weight_scale")
        elif (why := header_refusal(w)) is not None:  # worded as the cast would refuse it
            layout.problems.append(f"{_q(w.name)} ({w.scheme.label}): {why}")
        said = group.args.scale_dtype
        if scale is not None and said and scale.dtype.name != said:
            layout.notes.append(
                f"{scale.name!r} is {scale.dtype.name}; the config's scale_dtype says {said}"
            )
    return layout


_PACKED = (QuantScheme.CT_PACK, QuantScheme.CT_NVFP4, QuantScheme.CT_MXFP4)


def _fits(group: CtGroup, codes: TensorInfo | None, packed: bool) -> bool:
    """Whether a group's format is how these codes are stored (for choosing among equals)."""
    scheme = _CT_SCHEMES[group.format]
    if codes is None or packed != (scheme in _PACKED):
        return False
    if packed:
        return codes.dtype.name == ("I32" if scheme is QuantScheme.CT_PACK else "U8")
    return (codes.dtype.name in FP8_DTYPES) == (group.args.kind == "float")


def _ct_logical_shape(w: QuantizedWeight) -> tuple[int, ...]:
    """From the header alone: packed codes give rows and (for groups) columns exactly; a
    cast checks ``weight_shape``'s values against this before it writes."""
    shape, args = tuple(w.codes.shape), w.args
    assert args is not None
    if w.scheme in (QuantScheme.CT_FLOAT, QuantScheme.CT_INT) or len(shape) < 1:
        return shape
    if w.scheme in (QuantScheme.CT_NVFP4, QuantScheme.CT_MXFP4):
        return (*shape[:-1], shape[-1] * 2)
    scale = w.parts.get(Part.SCALE)
    if args.group_size and scale is not None and scale.shape:
        return (*shape[:-1], scale.shape[-1] * args.group_size)
    return (*shape[:-1], shape[-1] * 32 // args.num_bits)


# -- recognised, not dequantized ------------------------------------------------------------------


def gpt_oss(by_name: dict[str, TensorInfo], confirmed: bool) -> QuantLayout:
    """gpt-oss experts: ``X_blocks`` U8 [E, rows, G, 16] (two FP4 codes a byte) and ``X_scales``
    U8 [E, rows, G] (E8M0 exponents, one per 32 values). transformers dequantizes them into
    ``X`` [E, G·32, rows]: the stored rows become the last dimension."""
    layout = QuantLayout("gpt-oss MXFP4 (quant_method mxfp4)", confirmed)
    for name, blocks in by_name.items():
        base = module_of(name, "_blocks")
        scales = by_name.get(f"{base}_scales") if base else None
        if base is None or scales is None or len(blocks.shape) < 2:
            continue
        if blocks.dtype.name != "U8" or scales.dtype.name != "U8":
            continue  # MXFP4 stores both as bytes: anything else is a plain tensor so named
        shape = tuple(blocks.shape)
        if len(shape) == 4:
            logical = (shape[0], shape[2] * shape[3] * 2, shape[1])
        else:
            logical = (*shape[:-2], shape[-2] * shape[-1] * 2)
        layout.add(QuantizedWeight(base, QuantScheme.MXFP4, blocks, logical, {Part.SCALE: scales},
                                   WeightArgs(4, "float", "group", group_size=32)))  # fmt: skip
        if len(shape) != 4 or shape[3] != 16 or tuple(scales.shape) != shape[:3]:
            layout.problems.append(
                f"{name!r} {list(shape)} with scales {list(scales.shape)}: gpt-oss stores "
                "[experts, rows, groups, 16] with scales [experts, rows, groups]"
            )
    return layout


def gptq_awq(
    by_name: dict[str, TensorInfo], qc: dict, scheme: QuantScheme, confirmed: bool
) -> QuantLayout:
    bits = qc.get("bits", 4)
    if isinstance(bits, bool) or not isinstance(bits, int) or bits not in (2, 3, 4, 8):
        raise ConfigProblem(f"{scheme.label} quantization_config bits is {bits!r}")
    group = qc.get("group_size") if isinstance(qc.get("group_size"), int) else None
    layout = QuantLayout(scheme.label, confirmed)
    version = qc.get("version", "gemm")
    if scheme is QuantScheme.AWQ and str(version).lower() != "gemm":
        layout.unsupported = (
            f"AWQ version {version!r} packs its weights in a layout not read yet; a cast would "
            "write its codes as values, so it is refused"
        )
    for name, qweight in by_name.items():
        m = module_of(name, ".qweight")
        scales = by_name.get(f"{m}.scales") if m else None
        if m is None or scales is None or len(qweight.shape) != 2 or len(scales.shape) != 2:
            continue
        if qweight.dtype.name != "I32":
            continue  # packed codes are int32 words
        if scheme is QuantScheme.GPTQ:
            shape = (scales.shape[1], qweight.shape[0] * 32 // bits)
        else:
            shape = (scales.shape[1], qweight.shape[0])
        variant = (
            qc.get("checkpoint_format") if isinstance(qc.get("checkpoint_format"), str) else None
        )
        args = WeightArgs(bits, "int", "group", group_size=group if group and group > 0 else None,
                          symmetric=qc.get("sym", True) is not False, variant=variant)  # fmt: skip
        w = QuantizedWeight(m + ".weight", scheme, qweight, shape, {Part.SCALE: scales}, args)
        for suffix, part in (("qzeros", Part.ZERO_POINT), ("g_idx", Part.G_IDX)):
            if (t := by_name.get(f"{m}.{suffix}")) is not None:
                w.parts[part] = t
        layout.add(w)
    return layout


def bitsandbytes(by_name: dict[str, TensorInfo], confirmed: bool) -> QuantLayout:
    layout = QuantLayout("bitsandbytes", confirmed)
    for name, t in by_name.items():
        m = module_of(name, ".weight.absmax")
        if m is not None and m + ".weight" in by_name and by_name[m + ".weight"].dtype.name == "U8":
            codes = by_name[m + ".weight"]
            w = QuantizedWeight(m + ".weight", QuantScheme.BNB_4BIT, codes,
                                (codes.numel * 2,), {Part.SCALE: t})  # fmt: skip
            prefix = m + ".weight."
            w.others = [u for n, u in by_name.items() if n.startswith(prefix) and u is not t]
            layout.add(w)
        elif (
            (m := module_of(name, ".SCB")) is not None
            and m + ".weight" in by_name
            and by_name[m + ".weight"].dtype.name == "I8"
        ):
            codes = by_name[m + ".weight"]
            w = QuantizedWeight(m + ".weight", QuantScheme.BNB_8BIT, codes, tuple(codes.shape),
                                {Part.SCALE: t})  # fmt: skip
            if (fmt := by_name.get(m + ".weight_format")) is not None:
                w.others.append(fmt)
            layout.add(w)
    if layout.weights:
        layout.scheme_text = "/".join(sorted(s.label for s in layout.schemes))
    return layout
