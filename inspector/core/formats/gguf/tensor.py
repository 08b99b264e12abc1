"""A GGUF tensor stored in quantized blocks: its bytes (as U8) and what they stand for."""

from __future__ import annotations

from ...layout import TensorInfo
from .spec import GGML_TYPES, GgmlType


class GgufBlocksInfo(TensorInfo, gc=False, omit_defaults=True):
    """``shape``/``dtype`` describe the stored bytes (``U8 [nbytes]``); ``ggml_id`` is the block
    type and ``logical`` the weight's shape, outermost first, as the HF model has it."""

    ggml_id: int = 0
    logical: tuple[int, ...] = ()

    @property
    def ggml(self) -> GgmlType:
        return GGML_TYPES[self.ggml_id]
