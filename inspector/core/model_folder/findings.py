"""What ``lint`` reports: a finding with a severity, one line, and the tensors and files it is about."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    ERROR = "error"  # the folder does not load as it claims
    WARNING = "warning"  # it loads, but not as intended (wrong dtype, bytes wasted)
    INFO = "info"  # worth a look


@dataclass
class Finding:
    severity: Severity
    code: str
    message: str
    tensors: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    # the untranslated template and its fields (see TEMPLATES); empty for a message that is
    # another error's reason, shown as it is
    template: str = field(default="", compare=False)
    fields: dict[str, str] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, object]:
        return {
            "severity": self.severity.value,
            "code": self.code,
            "message": self.message,
            "tensors": self.tensors,
            "files": self.files,
        }


# Every message lint writes, by template: the window translates the template (gui/lint_texts.py
# lists the same strings for Qt's translation tools; a test keeps the two equal) and fills in
# the same fields. Numbers are written with thousands separators before they are filled in.
TEMPLATES = {
    "index_invalid": "{index} is not a readable index",
    "shard_missing": "{index} names {shard}, which is not in the folder",
    "tensor_not_in_index": (
        "{shard} holds tensors that {index} does not map to it (loaders never read them): {n}"
    ),
    "tensor_elsewhere_in_index": (
        "{shard} holds tensors that {index} does not map to it (loaders never read them): {n}, "
        "{m} of them mapped to another shard"
    ),
    "index_names_missing_tensor": "{index} maps tensors to {shard} that it does not hold: {n}",
    "total_size": "{index} says total_size {claimed} bytes; its shards hold {total}",
    "stray_pickle_twin": (
        "{name} is not used by any index (a pickle copy beside safetensors: a loader downloads "
        "both)"
    ),
    "stray_weights": (
        "{name} is not used by any index (a loader may pick it up instead of the shards)"
    ),
    "pickle_twin": (
        "{name} beside {weights}: a pickle copy of the weights (bytes downloaded twice)"
    ),
    "doubled_key": (
        "Names that repeat a part ({part}), as a save that added a prefix twice makes them "
        "(the model will not find them): {n}"
    ),
    "duplicate_tensor": (
        "{n} tensors hold identical bytes ({wasted} bytes stored again): tied weights saved twice?"
    ),
    "config_dtype": (
        "{config}, but {n} of {floats} float tensors are {kinds}: transformers' from_pretrained "
        "loads them as {dtype} (the config wins, a silent cast), while burn and safe_open keep "
        "{kinds} (the file is not what the model uses; burn's first {dtype} matmul panics on "
        "the mismatch)"
    ),
    "nan_inf": "Tensors that hold NaN or ±inf values: {n}",
    "quant_unconfirmed": (
        "Tensors look like {scheme} ({n} weights), but no config.json quantization_config "
        "confirms it: a loader reads their codes as values"
    ),
    "quant_mismatch": "Quantized tensors that do not fit {scheme}: {n}; the first: {problem}",
    "quant_ignore_unused": "quantization_config names modules the checkpoint does not have: {entries}",
    "quant_scale_dtype": "Scales stored in another dtype than the config says: {n}; the first: {note}",
    "quant_bad_scales": "Quantized weights with a scale that is 0, negative, inf or NaN: {n}",
    "quant_nan_codes": "FP8 weights that hold NaN codes: {n}",
    "odd_shard_size": "Shards far from the series' typical size of {size}: {n}",
    "pickle_imports": (
        "{name} is not a weights file, and it imports {imports}: torch.load(weights_only=False) "
        "of it would run them (nothing was run here)"
    ),
    "weights_unknown_objects": (
        "{name} imports {imports}, kept as inert placeholders here (nothing was run): "
        "torch.load(weights_only=True) refuses it, and weights_only=False would run them"
    ),
}


def finding(
    severity: Severity,
    code: str,
    template: str,
    tensors: list[str] | None = None,
    files: list[str] | None = None,
    **fields: object,
) -> Finding:
    """A finding whose message is ``TEMPLATES[template]`` filled in (numbers with separators)."""
    texts = {k: f"{v:,}" if isinstance(v, int) else str(v) for k, v in fields.items()}
    text = TEMPLATES[template]
    return Finding(severity, code, text.format(**texts), tensors or [], files or [], text, texts)
