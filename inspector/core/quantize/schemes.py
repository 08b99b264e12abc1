"""The data-free schemes ``quantize`` writes: llm-compressor's presets, as compressed-tensors
saves them (format, tensor suffixes, ``quantization_config``), version for version.

Each preset is the weight quantization of llm-compressor's scheme of that name (the activation
part only changes what ``config.json`` says: activations are quantized by the runtime, not here).
The ``config_group`` text is what compressed-tensors 0.19 writes for the preset, key for key, so
that a model we quantize carries the same ``quantization_config`` as llm-compressor's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class Strategy(str, Enum):
    """How weights share a scale (compressed-tensors' ``QuantizationStrategy``)."""

    CHANNEL = "channel"  # one per output row
    BLOCK = "block"  # one per 128×128 block
    GROUP = "group"  # one per ``group_size`` consecutive inputs of a row
    TENSOR_GROUP = "tensor_group"  # groups, and a global F32 scale per (fused) tensor


class Kind(str, Enum):
    """What a weight becomes."""

    FP8 = "float"  # E4M3 codes, one per value
    INT = "int"  # signed integers packed into int32 words
    FP4 = "fp4"  # E2M1 codes, two per byte


@dataclass(frozen=True)
class Scheme:
    """One preset: the weights' quantization and what the output holds for each weight."""

    name: str
    kind: Kind
    bits: int
    strategy: Strategy
    group_size: int | None = None
    block: tuple[int, int] | None = None
    scale_dtype: str | None = None  # None: the weight's own dtype
    fmt: str = ""  # compressed-tensors' format name
    activations: dict[str, Any] | None = None  # config.json's input_activations, as written

    @property
    def columns_unit(self) -> int:
        """The number of inputs a row must be a multiple of (a group or block width)."""
        if self.block is not None:
            return 1  # partial blocks are padded, as compressed-tensors pads them
        return self.group_size or 1

    def group_width(self, cols: int) -> int:
        """Inputs of a row that share one scale: the group, the block's width, else the row."""
        if self.block is not None:
            return self.block[1]
        return self.group_size or cols

    @property
    def rows_unit(self) -> int:
        """Rows a block of rows must be a multiple of: the block's height (FP8_BLOCK's scales
        cover 128 rows), else 1."""
        return self.block[0] if self.block else 1

    def weights_args(self) -> dict[str, Any]:
        """``config_groups.group_0.weights``, key for key as compressed-tensors writes it."""
        return {
            "actorder": None,
            "block_structure": list(self.block) if self.block else None,
            "dynamic": False,
            "group_size": self.group_size,
            "num_bits": self.bits,
            "observer": "memoryless_minmax",
            "observer_kwargs": {},
            "scale_dtype": self.scale_dtype,
            "strategy": self.strategy.value,
            "symmetric": True,
            "type": "int" if self.kind is Kind.INT else "float",
            "zp_dtype": None,
        }

    def quantization_config(self, ignore: list[str], version: str) -> dict[str, Any]:
        """config.json's ``quantization_config`` for a model quantized with this preset."""
        return {
            "config_groups": {
                "group_0": {
                    "format": self.fmt,
                    "input_activations": self.activations,
                    "output_activations": None,
                    "targets": ["Linear"],
                    "weights": self.weights_args(),
                }
            },
            "format": self.fmt,
            "global_compression_ratio": None,
            "ignore": ignore,
            "kv_cache_scheme": None,
            "quant_method": "compressed-tensors",
            "quantization_status": "compressed",
            "sparsity_config": {},
            "transform_config": {},
            "version": version,
        }


def _dynamic_fp8(strategy: str, group_size: int | None) -> dict[str, Any]:
    return {
        "actorder": None,
        "block_structure": None,
        "dynamic": True,
        "group_size": group_size,
        "num_bits": 8,
        "observer": None,
        "observer_kwargs": {},
        "scale_dtype": None,
        "strategy": strategy,
        "symmetric": True,
        "type": "float",
        "zp_dtype": None,
    }


COMPRESSED_TENSORS_VERSION = "0.19.0"  # the version whose output we reproduce, byte for byte

SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        Scheme("FP8_DYNAMIC", Kind.FP8, 8, Strategy.CHANNEL, fmt="float-quantized",
               activations=_dynamic_fp8("token", None)),
        Scheme("FP8_BLOCK", Kind.FP8, 8, Strategy.BLOCK, block=(128, 128), fmt="float-quantized",
               activations=_dynamic_fp8("group", 128)),
        Scheme("W8A16", Kind.INT, 8, Strategy.GROUP, group_size=128, fmt="pack-quantized"),
        Scheme("W4A16", Kind.INT, 4, Strategy.GROUP, group_size=128, fmt="pack-quantized"),
        Scheme("NVFP4A16", Kind.FP4, 4, Strategy.TENSOR_GROUP, group_size=16,
               scale_dtype="torch.float8_e4m3fn", fmt="nvfp4-pack-quantized"),
        Scheme("MXFP4A16", Kind.FP4, 4, Strategy.GROUP, group_size=32,
               scale_dtype="torch.uint8", fmt="mxfp4-pack-quantized"),
    )
}  # fmt: skip


def scheme_named(name: str) -> Scheme | None:
    """The preset called ``name`` (any case, ``-`` for ``_``), or None."""
    return SCHEMES.get(name.strip().upper().replace("-", "_"))
