"""Training checkpoints: the model's weights inside what a training run saved.

A Lightning ``.ckpt`` is ``{"state_dict": …, "optimizer_states": […], "epoch": …}``; a plain
training loop saves ``{"model": …, "optimizer": …, "epoch": …}``; DDP prefixes every name with
``module.``. Shown or cast as they are, the optimizer's ``exp_avg``/``exp_avg_sq`` come first, are
flagged and cast, and the weights carry a ``state_dict.`` prefix no model expects. This module
recognises the layout by its top-level keys and gives the model's tensors under the names a
``load_state_dict`` of the model takes; everything else is counted, not lost (``--keep-all``).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

import msgspec

from .formats.torch_pickle import pickle_facts
from .layout import Header, TensorInfo


class TrainingKind(enum.Enum):
    LIGHTNING = "Lightning"
    TRAINING_LOOP = "training loop"
    DDP = "DDP"


# keys only a training run saves beside the weights
_LIGHTNING_MARKS = {"optimizer_states", "lr_schedulers", "pytorch-lightning_version", "loops"}
_RUN_MARKS = {
    "optimizer", "optimizer_state_dict", "optim", "scheduler", "lr_scheduler", "epoch",
    "global_step", "step", "iteration", "args", "config", "scaler", "amp",
}  # fmt: skip
# where a training loop keeps the model, most common first
_MODEL_KEYS = ("model", "model_state_dict", "state_dict", "module", "net", "network")
_DDP = "module."


@dataclass(frozen=True)
class TrainingLayout:
    """What was recognised: the kind, the prefix taken off the model's names, what was left."""

    kind: TrainingKind
    prefix: str  # e.g. "state_dict." (and "module." for DDP)
    left_tensors: int
    left_values: int

    def line(self, n_model: int) -> str:
        """``Lightning checkpoint: the model's 156 tensors (prefix state_dict. taken off); 312
        other tensors and 7 values (optimizer state, epoch, ...) left out``."""
        left = f"{self.left_tensors:,} other tensors and {self.left_values:,} values"
        return (
            f"{self.kind.value} checkpoint: the model's {n_model:,} tensors (prefix {self.prefix} "
            f"taken off); {left} (optimizer state, counters, settings) left out"
        )


def model_tensors(header: Header) -> tuple[Header, TrainingLayout] | None:
    """The header of the model's weights alone, renamed as the model expects; None when the
    file is not a training checkpoint (a plain state_dict is shown as it is)."""
    facts = pickle_facts(header)
    if facts is None or not header.tensors:
        return None
    value_names = [v.name for v in facts.values]
    top = {_top(t.name) for t in header.tensors} | {_top(n) for n in value_names}
    prefix, kind = _model_prefix(header.tensors, top)
    if prefix is None:
        return None
    model = [t for t in header.tensors if t.name.startswith(prefix)]
    stripped = [t.name[len(prefix) :] for t in model]
    if stripped and all(n.startswith(_DDP) for n in stripped):
        prefix += _DDP
        stripped = [n[len(_DDP) :] for n in stripped]
    if not model or len(set(stripped)) != len(stripped) or "" in stripped:
        return None
    renamed = [msgspec.structs.replace(t, name=n) for t, n in zip(model, stripped, strict=True)]
    left_values = sum(1 for n in value_names if not n.startswith(prefix))
    layout = TrainingLayout(kind, prefix, len(header.tensors) - len(model), left_values)
    return dataclasses.replace(header, tensors=renamed, by_name=None), layout


def _top(name: str) -> str:
    return name.split(".", 1)[0]


def _model_prefix(tensors: list[TensorInfo], top: set[str]) -> tuple[str | None, TrainingKind]:
    if "state_dict" in top and top & _LIGHTNING_MARKS:
        return "state_dict.", TrainingKind.LIGHTNING
    if top & _RUN_MARKS:
        for key in _MODEL_KEYS:
            if key in top and any(t.name.startswith(key + ".") for t in tensors):
                return key + ".", TrainingKind.TRAINING_LOOP
    if all(t.name.startswith(_DDP) for t in tensors):
        return _DDP, TrainingKind.DDP
    return None, TrainingKind.DDP


def training_left_out(ckpt: object) -> dict[str, object] | None:
    """The cast report's ``left_out``: what a cast of a training checkpoint did not write."""
    layout = getattr(ckpt, "training", None)
    if layout is None:
        return None
    return {
        "kind": layout.kind.value,
        "prefix_removed": layout.prefix,
        "tensors": layout.left_tensors,
        "values": layout.left_values,
    }
