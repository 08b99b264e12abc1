"""What a pickle names outside the allowlist, worded once for every front: the note of ``list``,
``check``, ``diff`` and ``cast``, the window's message, lint's finding, ``list --json``.

Such objects were built as inert placeholders (see ``formats/torch_pickle/unknown.py``): the file
opened, its tensors were read, and nothing was executed; torch's ``weights_only=True`` still
refuses the file, and ``scan`` still calls it unsafe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .formats.torch_pickle import pickle_facts
from .wording import _clip

if TYPE_CHECKING:
    from .checkpoint import Checkpoint

_SHOWN = 5
_NAME_CHARS = 120


def unknown_imports(ckpt: Checkpoint) -> list[str]:
    """The globals outside the allowlist of every pickle of ``ckpt``, first seen first."""
    names: dict[str, None] = {}
    for header in ckpt.files:
        facts = pickle_facts(header)
        if facts is not None:
            names.update(dict.fromkeys(facts.unknown))
    return list(names)


def unread_tensors(ckpt: Checkpoint) -> list[str]:
    """Tensors whose rebuild needs an unknown object: named, never read."""
    return [
        v.name for h in ckpt.files if (facts := pickle_facts(h)) for v in facts.values if v.unread
    ]


def unknown_notices(ckpt: Checkpoint) -> list[str]:
    """One line naming the unknown objects, and one naming the tensors they kept from being
    read; none for a checkpoint whose pickles import only the allowlist."""
    names = unknown_imports(ckpt)
    if not names:
        return []
    lines = [
        f"unknown objects not executed: {_some(names)} (kept as inert placeholders; "
        "torch.load(weights_only=True) refuses this file: see checkpoint-inspector scan)"
    ]
    unread = unread_tensors(ckpt)
    if unread:
        lines.append(
            f"{len(unread):,} {'tensor' if len(unread) == 1 else 'tensors'} not read, their "
            f"rebuild needs an unknown object: {_some(unread)}"
        )
    return lines


def _some(names: list[str]) -> str:
    """The first few names, each clipped (a global's name is as long as the file makes it)."""
    shown = ", ".join(_clip(n, _NAME_CHARS) for n in names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN:,} more" if len(names) > _SHOWN else "")
