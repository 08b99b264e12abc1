"""Which dtype a checkpoint is judged against: one rule for the command line and the window.

An explicit choice (``--target``, or the person picking in the chooser) wins; else the dtype the
checkpoint's own ``config.json`` names; else the default (F32; the window remembers the last
dtype a person chose). A config's dtype belongs to its checkpoint: the next file opened without
one is judged against the choice or the default again, never against the last folder's config.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .dtypes import DTYPES, DType


class TargetSource(enum.Enum):
    CHOSEN = "chosen"  # --target, or picked in the window's chooser
    CONFIG = "config"  # the checkpoint's config.json
    DEFAULT = "default"  # nothing said: F32, or the window's remembered choice


@dataclass(frozen=True)
class TargetChoice:
    dtype: DType
    source: TargetSource


def pick_target(
    chosen: DType | None, config_dtype: DType | None, default: DType | None = None
) -> TargetChoice:
    """The target by the rule above."""
    if chosen is not None:
        return TargetChoice(chosen, TargetSource.CHOSEN)
    if config_dtype is not None:
        return TargetChoice(config_dtype, TargetSource.CONFIG)
    return TargetChoice(default if default is not None else DTYPES["F32"], TargetSource.DEFAULT)
