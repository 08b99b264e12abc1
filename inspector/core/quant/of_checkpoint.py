"""The quantization layout of an opened checkpoint, from the config.json beside it."""

from __future__ import annotations

from ..checkpoint import Checkpoint
from ..model_folder.config import ModelConfig, read_model_config
from .layout import QuantLayout
from .recognise import recognise

_UNSET = object()


def quant_layout(
    ckpt: Checkpoint, config: ModelConfig | object | None = _UNSET
) -> QuantLayout | None:
    """None for a plain checkpoint. ``config``: the already-read config.json (None: there is
    none); left out, it is read here (a broken one raises: a quantized model needs it)."""
    if config is _UNSET:
        config = read_model_config(ckpt.path)
    qc = config.quant_config if isinstance(config, ModelConfig) else None
    return recognise(ckpt.tensors, qc)
