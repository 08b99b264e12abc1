"""The model's own dtype, from the ``config.json`` beside the weights.

transformers writes ``torch_dtype`` (``dtype`` from v4.56/v5); multimodal configs keep it in
``text_config``. ``"auto"`` or a missing field means the config does not say.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from ..dtypes import DTYPES, DType
from ..errors import CheckpointError

CONFIG_NAME = "config.json"
DTYPE_KEYS = ("torch_dtype", "dtype")
NESTED = ("text_config", "llm_config", "language_config")
_TORCH_NAMES = {  # each dtype's canonical torch name comes first: it is the one written
    "float32": "F32", "float": "F32", "float16": "F16", "half": "F16", "bfloat16": "BF16",
    "float64": "F64", "double": "F64", "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2",
}  # fmt: skip
MAX_CONFIG_BYTES = 16 << 20


@dataclass
class ModelConfig:
    """What config.json says about the weights."""

    path: str
    dtype: DType | None
    dtype_text: str | None  # as written, e.g. "bfloat16"
    dtype_key: str | None  # where, e.g. "torch_dtype" or "text_config.dtype"
    modules_to_not_convert: list[str] = field(default_factory=list)
    quantized: bool = False
    quant_config: Any = None  # quantization_config as written (an object, or anything else)
    model_type: str | None = None  # transformers' model_type ("llama", "gpt2"), when a string

    def describe(self) -> str:
        return f"config.json {self.dtype_key} = {self.dtype_text}"


def model_folder(checkpoint_path: str) -> str:
    """The folder a checkpoint lives in (itself when it is a folder)."""
    path = os.path.abspath(checkpoint_path)
    return path if os.path.isdir(path) else os.path.dirname(path)


def read_model_config(checkpoint_path: str) -> ModelConfig | None:
    """The config beside the checkpoint, or None when there is none. A config that is not
    valid JSON is a CheckpointError: a person asked for it (``--target config``) or will load it."""
    path = os.path.join(model_folder(checkpoint_path), CONFIG_NAME)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as e:
        raise CheckpointError(path, f"cannot read: {e.strerror or e}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise CheckpointError(path, "is over 16 MiB; not a model config")
    try:
        obj = json.loads(raw)
    except ValueError:
        raise CheckpointError(path, "is not valid JSON") from None
    except RecursionError:
        raise CheckpointError(path, "is nested too deeply to be a model config") from None
    if not isinstance(obj, dict):
        raise CheckpointError(path, "is not a JSON object")
    return _config_from(path, obj)


def _config_from(path: str, obj: dict[str, Any]) -> ModelConfig:
    text, key = _find_dtype(obj)
    dtype = None
    if text is not None:
        name = _TORCH_NAMES.get(text.removeprefix("torch."))
        dtype = DTYPES[name] if name else None
    quant = obj.get("quantization_config")
    skip: list[str] = []
    if isinstance(quant, dict):
        listed = quant.get("modules_to_not_convert") or []
        skip = [m for m in listed if isinstance(m, str)] if isinstance(listed, list) else []
    # a quantization_config that is not an object is kept as it is: a cast must refuse it,
    # not cast the tensors as if the model were plain
    model_type = obj.get("model_type")
    model_type = model_type if isinstance(model_type, str) else None
    return ModelConfig(path, dtype, text, key, skip, quant is not None, quant, model_type)


def _find_dtype(obj: dict[str, Any]) -> tuple[str | None, str | None]:
    for k in DTYPE_KEYS[::-1]:  # the newer spelling wins when both are there
        if isinstance(obj.get(k), str) and obj[k] != "auto":
            return obj[k], k
    for nest in NESTED:
        sub = obj.get(nest)
        if isinstance(sub, dict):
            for k in DTYPE_KEYS[::-1]:
                if isinstance(sub.get(k), str) and sub[k] != "auto":
                    return sub[k], f"{nest}.{k}"
    return None, None


def config_with_dtype(text: str, target: DType, dequantized: bool = False) -> str:
    """config.json with every dtype field (both spellings, nested configs too) set to ``target``,
    written as transformers writes it (2-space indent, keys sorted). ``dequantized``: the
    weights are plain floats now, so ``quantization_config`` goes (transformers would otherwise
    look for scales that are not there)."""
    obj = json.loads(text)
    if dequantized:
        obj.pop("quantization_config", None)
        for n in NESTED:
            if isinstance(obj.get(n), dict):
                obj[n].pop("quantization_config", None)
    torch_name = _torch_name(target)
    for holder in [obj, *(obj[n] for n in NESTED if isinstance(obj.get(n), dict))]:
        for k in DTYPE_KEYS:
            if k in holder:
                holder[k] = torch_name
    return json.dumps(obj, indent=2, sort_keys=True) + "\n"


def _torch_name(dtype: DType) -> str:
    for name, dt in _TORCH_NAMES.items():
        if dt == dtype.name:
            return name
    return dtype.name.lower()


@dataclass
class ConfigMismatch:
    """config.json names one dtype, and some float weights are stored in another."""

    config: ModelConfig
    n_off: int
    n_floats: int
    kinds: str  # "F32" or "F16/F32"

    def line(self) -> str:
        noun = "tensor" if self.n_floats == 1 else "tensors"
        verb = "is" if self.n_off == 1 else "are"
        return (
            f"{self.config.describe()}, but {self.n_off} of {self.n_floats} float {noun} {verb} "
            f"{self.kinds}"
        )


def weights_disagree(config: ModelConfig, tensors: list) -> ConfigMismatch | None:
    """How far the weights are from the config's dtype (None: they agree, or it names none)."""
    if config.dtype is None:
        return None
    floats = [t for t in tensors if t.dtype.is_float]
    off = [t for t in floats if t.dtype.name != config.dtype.name]
    if not off:
        return None
    return ConfigMismatch(
        config, len(off), len(floats), "/".join(sorted({t.dtype.name for t in off}))
    )
