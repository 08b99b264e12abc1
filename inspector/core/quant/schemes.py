"""The quantization schemes we recognise, and which of them a cast can dequantize exactly."""

from __future__ import annotations

from enum import Enum


class QuantScheme(str, Enum):
    """How a weight is stored. Values are what JSON's ``quant.scheme`` says."""

    FP8_BLOCK = "fp8"  # transformers/DeepSeek: weight F8 + weight_scale_inv per block
    CT_FLOAT = "float-quantized"  # compressed-tensors: F8 codes + weight_scale
    CT_INT = "int-quantized"  # compressed-tensors: I8 codes (also "naive-quantized")
    CT_PACK = "pack-quantized"  # compressed-tensors: int4/int8 packed in I32 + weight_shape
    CT_NVFP4 = "nvfp4-pack-quantized"  # FP4 E2M1 pairs in U8, F8 group-16 scales, global scale
    CT_MXFP4 = "mxfp4-pack-quantized"  # FP4 E2M1 pairs in U8, E8M0 group-32 scales
    MXFP4 = "mxfp4"  # gpt-oss MoE: *_blocks + *_scales
    GPTQ = "gptq"
    AWQ = "awq"
    BNB_4BIT = "bitsandbytes-4bit"
    BNB_8BIT = "bitsandbytes-8bit"
    GGUF = "gguf"  # llama.cpp's block types (Q4_K, Q8_0, IQ4_XS…), one per tensor
    BURN = "burn-qfloat"  # burn's QFloat in a .bpk: values, then scales, in one tensor

    def __str__(self) -> str:
        return self.value

    @property
    def label(self) -> str:
        """How people name it."""
        return _LABELS[self]

    @property
    def dequantizable(self) -> bool:
        """A cast can write this scheme's weights as plain floats, bit-identical to its
        reference dequantization. The others are recognised and shown, never cast."""
        return self in _DEQUANTIZABLE


_LABELS = {
    QuantScheme.FP8_BLOCK: "FP8 block-scaled (quant_method fp8)",
    QuantScheme.CT_FLOAT: "compressed-tensors float-quantized",
    QuantScheme.CT_INT: "compressed-tensors int-quantized",
    QuantScheme.CT_PACK: "compressed-tensors pack-quantized",
    QuantScheme.CT_NVFP4: "compressed-tensors NVFP4",
    QuantScheme.CT_MXFP4: "compressed-tensors MXFP4",
    QuantScheme.MXFP4: "gpt-oss MXFP4",
    QuantScheme.GPTQ: "GPTQ",
    QuantScheme.AWQ: "AWQ",
    QuantScheme.BNB_4BIT: "bitsandbytes 4-bit",
    QuantScheme.BNB_8BIT: "bitsandbytes 8-bit",
    QuantScheme.GGUF: "GGUF (llama.cpp)",
    QuantScheme.BURN: "burn QFloat",
}
_DEQUANTIZABLE = frozenset(
    {
        QuantScheme.FP8_BLOCK,
        QuantScheme.CT_FLOAT,
        QuantScheme.CT_INT,
        QuantScheme.CT_PACK,
        QuantScheme.CT_NVFP4,
        QuantScheme.CT_MXFP4,
        QuantScheme.MXFP4,
        QuantScheme.GPTQ,
        QuantScheme.AWQ,
        QuantScheme.BNB_4BIT,
        QuantScheme.BNB_8BIT,
        QuantScheme.GGUF,
        QuantScheme.BURN,
    }
)
