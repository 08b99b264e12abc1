"""A Burnpack tensor burn quantized (``QFloat``): its bytes (as U8) and what they stand for."""

from __future__ import annotations

from ...layout import TensorInfo
from .qfloat import BurnQuant


class BurnQuantInfo(TensorInfo, gc=False, omit_defaults=True):
    """``shape``/``dtype`` describe the stored bytes (``U8 [nbytes]``: values, then scales);
    ``logical`` is the tensor's shape as burn has it and ``quant`` its scheme."""

    logical: tuple[int, ...] = ()
    quant: BurnQuant | None = None

    @property
    def scheme(self) -> BurnQuant:
        assert self.quant is not None
        return self.quant
