"""GGUF (llama.cpp, Ollama, LM Studio): read its header, bounded, header only.

``spec`` holds the format's numbers and every ggml type, ``reader`` validates a file as
llama.cpp does (and bounds every count first), ``facts`` keeps its key/values and types.
Dequantization uses the ggml project's ``gguf`` package (``core/quant/gguf_rows``).
"""

from .facts import ArraySummary, GgufFacts, gguf_facts
from .reader import read_gguf
from .spec import FORMAT_NAME, GGML_TYPES, SUFFIX, GgmlType
from .tensor import GgufBlocksInfo

__all__ = [
    "FORMAT_NAME",
    "GGML_TYPES",
    "SUFFIX",
    "ArraySummary",
    "GgmlType",
    "GgufBlocksInfo",
    "GgufFacts",
    "gguf_facts",
    "read_gguf",
]
