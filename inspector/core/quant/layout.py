"""A quantized checkpoint seen as the model it stands for: one logical weight per stored group
of codes and companions (scales, zero points, global scales, shapes, group indices)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum

from ..layout import TensorInfo
from .schemes import QuantScheme


class Part(str, Enum):
    """What a companion tensor holds for its weight."""

    SCALE = "scale"
    ZERO_POINT = "zero_point"
    GLOBAL_SCALE = "global_scale"
    SHAPE = "shape"
    G_IDX = "g_idx"
    OTHER = "other"  # recognised as belonging to the weight, not used by a dequantization


@dataclass(frozen=True)
class WeightArgs:
    """How the codes map to values (compressed-tensors' ``weights`` args, or the fp8 config)."""

    num_bits: int
    kind: str  # "float" or "int"
    strategy: str  # "tensor", "channel", "group", "tensor_group", "block"
    group_size: int | None = None
    block: tuple[int, int] | None = None
    symmetric: bool = True
    scale_dtype: str | None = None  # what the config says the scales are stored as
    variant: str | None = None  # GPTQ's checkpoint_format ("gptq_v2": zeros stored as they are)

    def describe(self) -> str:
        if self.block is not None:
            return f"block {self.block[0]}×{self.block[1]}"
        if self.group_size:
            return f"group {self.group_size}"
        return f"per {self.strategy}"


@dataclass
class QuantizedWeight:
    name: str  # the logical name the unquantized model uses, e.g. "…q_proj.weight"
    scheme: QuantScheme
    codes: TensorInfo
    shape: tuple[int, ...]  # logical shape (packed codes are smaller)
    parts: dict[Part, TensorInfo] = field(default_factory=dict)
    args: WeightArgs | None = None
    others: list[TensorInfo] = field(default_factory=list)  # Part.OTHER companions
    block_type: str | None = None  # GGUF: the ggml type of the codes (Q4_K, IQ4_XS…)
    bits_per_weight: float | None = None  # GGUF: bytes on disk per weight, in bits
    detail: str | None = None  # burn: the whole scheme when block_type is its short name
    block_dims: tuple[int, ...] | None = None  # burn: the block of a per-block scheme

    @property
    def params(self) -> int:
        return math.prod(self.shape)

    @property
    def stored_dtype(self) -> str:
        """What the codes are stored as: a GGUF block type (``Q4_K``), else the codes' dtype."""
        return self.block_type or self.codes.dtype_name

    @property
    def numel(self) -> int:  # as TensorInfo says it, for the statistics
        return self.params

    @property
    def nbytes(self) -> int:
        """Bytes on disk: codes and companions."""
        return sum(t.nbytes for t in self.stored)

    @property
    def companions(self) -> list[str]:
        return [t.name for t in self.parts.values()] + [t.name for t in self.others]

    @property
    def stored(self) -> list[TensorInfo]:
        """Every stored tensor of this weight, codes first."""
        return [self.codes, *self.parts.values(), *self.others]

    def storage(self) -> str:
        """``F8_E4M3, block 128×128, scales F32`` — what a person needs to read the codes."""
        if self.block_type is not None:
            return f"{self.detail or self.block_type}, {self.bits_per_weight:.4g} bits/weight"
        bits = [self.codes.dtype.name]
        if self.scheme in (QuantScheme.CT_PACK, QuantScheme.GPTQ, QuantScheme.AWQ) and self.args:
            bits = [f"int{self.args.num_bits} packed in {self.codes.dtype.name}"]
        if self.scheme in (QuantScheme.CT_NVFP4, QuantScheme.CT_MXFP4, QuantScheme.MXFP4):
            bits = ["FP4 E2M1 pairs in U8"]
        if self.args is not None:
            bits.append(self.args.describe())
        scale = self.parts.get(Part.SCALE)
        if scale is not None:
            bits.append(f"scales {scale.dtype.name}")
        return ", ".join(bits)

    def to_json(self) -> dict[str, object]:
        """DESIGN's ``quant`` object."""
        doc: dict[str, object] = {
            "scheme": self.scheme.value,
            "storage_dtype": self.detail or self.block_type or self.codes.dtype.name,
        }
        if self.bits_per_weight is not None:
            doc["bits_per_weight"] = self.bits_per_weight
        if self.block_dims is not None:
            doc["block"] = list(self.block_dims)
        elif self.args is not None and self.args.block is not None:
            doc["block"] = list(self.args.block)
        elif self.args is not None and self.args.group_size:
            doc["group"] = self.args.group_size
        doc["companions"] = self.companions
        return doc


@dataclass
class QuantLayout:
    """Every quantized weight of a checkpoint, and what could not be made sense of."""

    scheme_text: str  # "compressed-tensors float-quantized (FP8)", for the summary line
    confirmed: bool  # named by config.json; False: guessed from tensor names alone
    weights: dict[str, QuantizedWeight] = field(default_factory=dict)  # by logical name
    part_of: dict[str, str] = field(default_factory=dict)  # stored name -> logical name
    problems: list[str] = field(default_factory=list)  # a cast refuses while any is here
    notes: list[str] = field(default_factory=list)  # odd, not wrong: lint shows them
    unsupported: str | None = None  # why a cast cannot dequantize this checkpoint

    @property
    def schemes(self) -> set[QuantScheme]:
        return {w.scheme for w in self.weights.values()}

    def add(self, w: QuantizedWeight) -> None:
        self.weights[w.name] = w
        for t in w.stored:
            self.part_of[t.name] = w.name

    def to_json(self) -> dict[str, object]:
        """``list --json``'s ``quantization``: the scheme, whether config.json named it, and
        what does not fit."""
        return {
            "scheme": self.scheme_text,
            "confirmed": self.confirmed,
            "weights": len(self.weights),
            "problems": self.problems,
            "dequantizable": self.cast_refusal() is None,
        }

    def describe(self) -> str:
        """``compressed-tensors float-quantized: 7 weights`` (+ "looks like" when guessed)."""
        n = len(self.weights)
        text = f"{self.scheme_text}: {n:,} quantized weight{'s' if n != 1 else ''}"
        return text if self.confirmed else f"looks like {text}, no config.json to confirm"

    def cast_refusal(self) -> str | None:
        """One line saying why a cast would corrupt this checkpoint, or None when it can
        dequantize every weight exactly."""
        if self.unsupported is not None:
            return self.unsupported
        if not self.confirmed:
            return (
                f"looks like {self.scheme_text} but there is no config.json quantization_config "
                "to confirm the scheme; a cast would write the codes unscaled, so it is refused"
            )
        if self.problems:
            return self.problems[0]
        return None
