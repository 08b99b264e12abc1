"""GGUF's fixed numbers (ggml's ``gguf.h``/``ggml.h``, the ``gguf`` package's ``constants``).

A file: ``GGUF``, u32 version (2 or 3), u64 tensor count, u64 key/value count, the key/values,
the tensor infos (name, u32 n_dims, u64 dims innermost first, u32 ggml type, u64 offset), then
padding to ``general.alignment`` (default 32) and the data, every offset a multiple of it.
All little-endian (big-endian GGUF exists; its version reads byte-swapped and is refused).
"""

from __future__ import annotations

FORMAT_NAME = "gguf"
SUFFIX = ".gguf"
MAGIC = b"GGUF"
VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
MAX_DIMS = 4  # GGML_MAX_DIMS
MAX_NAME = 64  # GGML_MAX_NAME: llama.cpp refuses a tensor name of 64 bytes or more

# value types: id -> (name, struct format or None)
VALUE_TYPES: dict[int, tuple[str, str | None]] = {
    0: ("uint8", "<B"), 1: ("int8", "<b"), 2: ("uint16", "<H"), 3: ("int16", "<h"),
    4: ("uint32", "<I"), 5: ("int32", "<i"), 6: ("float32", "<f"), 7: ("bool", "<?"),
    8: ("string", None), 9: ("array", None), 10: ("uint64", "<Q"), 11: ("int64", "<q"),
    12: ("float64", "<d"),
}  # fmt: skip
STRING, ARRAY = 8, 9


class GgmlType:
    """One ggml tensor type: ``block`` elements stored in ``type_size`` bytes."""

    __slots__ = ("block", "id", "name", "plain", "type_size")

    def __init__(self, id_: int, name: str, block: int, type_size: int, plain: str | None) -> None:
        self.id, self.name, self.block, self.type_size = id_, name, block, type_size
        self.plain = plain  # the safetensors dtype holding the same values, for unquantized types

    @property
    def bits_per_weight(self) -> float:
        return self.type_size * 8 / self.block

    def nbytes(self, numel: int) -> int:
        return numel // self.block * self.type_size


def _t(id_: int, name: str, block: int, size: int, plain: str | None = None) -> GgmlType:
    return GgmlType(id_, name, block, size, plain)


# every type the gguf package (0.19) knows; 4, 5 (Q4_2/Q4_3) and 31–33, 36–38 were removed
GGML_TYPES: dict[int, GgmlType] = {
    t.id: t
    for t in (
        _t(0, "F32", 1, 4, "F32"), _t(1, "F16", 1, 2, "F16"), _t(2, "Q4_0", 32, 18),
        _t(3, "Q4_1", 32, 20), _t(6, "Q5_0", 32, 22), _t(7, "Q5_1", 32, 24),
        _t(8, "Q8_0", 32, 34), _t(9, "Q8_1", 32, 40), _t(10, "Q2_K", 256, 84),
        _t(11, "Q3_K", 256, 110), _t(12, "Q4_K", 256, 144), _t(13, "Q5_K", 256, 176),
        _t(14, "Q6_K", 256, 210), _t(15, "Q8_K", 256, 292), _t(16, "IQ2_XXS", 256, 66),
        _t(17, "IQ2_XS", 256, 74), _t(18, "IQ3_XXS", 256, 98), _t(19, "IQ1_S", 256, 50),
        _t(20, "IQ4_NL", 32, 18), _t(21, "IQ3_S", 256, 110), _t(22, "IQ2_S", 256, 82),
        _t(23, "IQ4_XS", 256, 136), _t(24, "I8", 1, 1, "I8"), _t(25, "I16", 1, 2, "I16"),
        _t(26, "I32", 1, 4, "I32"), _t(27, "I64", 1, 8, "I64"), _t(28, "F64", 1, 8, "F64"),
        _t(29, "IQ1_M", 256, 56), _t(30, "BF16", 1, 2, "BF16"), _t(34, "TQ1_0", 256, 54),
        _t(35, "TQ2_0", 256, 66), _t(39, "MXFP4", 32, 17), _t(40, "NVFP4", 64, 36),
        _t(41, "Q1_0", 128, 18),
    )
}  # fmt: skip


def aligned(offset: int, alignment: int) -> int:
    return -(-offset // alignment) * alignment
