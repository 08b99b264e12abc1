"""lint's messages as Qt's translation tools see them: the same templates as
``core/model_folder/findings.TEMPLATES`` (a test keeps them equal), marked for extraction; the
window translates the template and fills in the finding's fields."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP

from inspector.core.model_folder.findings import Severity

from .i18n import translate

if TYPE_CHECKING:
    from inspector.core.model_folder.findings import Finding

LINT_TEMPLATES = (
    QT_TRANSLATE_NOOP("LintFinding", "{index} is not a readable index"),
    QT_TRANSLATE_NOOP("LintFinding", "{index} names {shard}, which is not in the folder"),
    QT_TRANSLATE_NOOP(
        "LintFinding",
        "{shard} holds tensors that {index} does not map to it (loaders never read them): {n}",
    ),
    QT_TRANSLATE_NOOP(
        "LintFinding",
        "{shard} holds tensors that {index} does not map to it (loaders never read them): {n}, {m} of them mapped to another shard",
    ),
    QT_TRANSLATE_NOOP("LintFinding", "{index} maps tensors to {shard} that it does not hold: {n}"),
    QT_TRANSLATE_NOOP(
        "LintFinding", "{index} says total_size {claimed} bytes; its shards hold {total}"
    ),
    QT_TRANSLATE_NOOP(
        "LintFinding",
        "{name} is not used by any index (a pickle copy beside safetensors: a loader downloads both)",
    ),
    QT_TRANSLATE_NOOP(
        "LintFinding",
        "{name} is not used by any index (a loader may pick it up instead of the shards)",
    ),
    QT_TRANSLATE_NOOP(
        "LintFinding",
        "{name} beside {weights}: a pickle copy of the weights (bytes downloaded twice)",
    ),
    QT_TRANSLATE_NOOP(
        "LintFinding",
        "Names that repeat a part ({part}), as a save that added a prefix twice makes them (the model will not find them): {n}",
    ),
    QT_TRANSLATE_NOOP(
        "LintFinding",
        "{n} tensors hold identical bytes ({wasted} bytes stored again): tied weights saved twice?",
    ),
    QT_TRANSLATE_NOOP(
        "LintFinding",
        "{config}, but {n} of {floats} float tensors are {kinds}: transformers' from_pretrained loads them as {dtype} (the config wins, a silent cast), while burn and safe_open keep {kinds} (the file is not what the model uses; burn's first {dtype} matmul panics on the mismatch)",
    ),
    QT_TRANSLATE_NOOP("LintFinding", "Tensors that hold NaN or ±inf values: {n}"),
    QT_TRANSLATE_NOOP(
        "LintFinding",
        "Tensors look like {scheme} ({n} weights), but no config.json quantization_config confirms it: a loader reads their codes as values",
    ),
    QT_TRANSLATE_NOOP(
        "LintFinding", "Quantized tensors that do not fit {scheme}: {n}; the first: {problem}"
    ),
    QT_TRANSLATE_NOOP(
        "LintFinding", "quantization_config names modules the checkpoint does not have: {entries}"
    ),
    QT_TRANSLATE_NOOP(
        "LintFinding",
        "Scales stored in another dtype than the config says: {n}; the first: {note}",
    ),
    QT_TRANSLATE_NOOP(
        "LintFinding", "Quantized weights with a scale that is 0, negative, inf or NaN: {n}"
    ),
    QT_TRANSLATE_NOOP("LintFinding", "FP8 weights that hold NaN codes: {n}"),
    QT_TRANSLATE_NOOP("LintFinding", "Shards far from the series' typical size of {size}: {n}"),
    QT_TRANSLATE_NOOP(
        "LintFinding",
        "{name} is not a weights file, and it imports {imports}: torch.load(weights_only=False) of it would run them (nothing was run here)",
    ),
    QT_TRANSLATE_NOOP(
        "LintFinding",
        "{name} imports {imports}, kept as inert placeholders here (nothing was run): torch.load(weights_only=True) refuses it, and weights_only=False would run them",
    ),
)


def finding_text(f: Finding) -> str:
    """The finding in the window's language; a message that is another error's reason as it is."""
    if not f.template:
        return f.message
    return translate("LintFinding", f.template).format(**f.fields)


def severity_text(severity: Severity) -> str:
    return translate("LintFinding", _SEVERITY[severity])


_SEVERITY = {
    Severity.ERROR: QT_TRANSLATE_NOOP("LintFinding", "error"),
    Severity.WARNING: QT_TRANSLATE_NOOP("LintFinding", "warning"),
    Severity.INFO: QT_TRANSLATE_NOOP("LintFinding", "info"),
}
