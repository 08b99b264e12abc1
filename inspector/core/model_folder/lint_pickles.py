"""lint: pickles in a model folder that are not its weights (``training_args.bin`` written by
every ``Trainer.save_model``, ``optimizer.pt``, ``rng_state.pth``) are scanned, never loaded: what
they import is a finding, since ``torch.load`` of them would run it. So are the unknown objects a
weights pickle holds (omegaconf hyper-parameters): it opened, but torch would refuse or run it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..formats.torch_pickle import PICKLE_SUFFIXES, ImportVerdict, pickle_facts
from ..scan.walk import ScanStatus, scan_file
from ..wording import _clip
from .findings import Finding, Severity, finding

if TYPE_CHECKING:
    from ..checkpoint import Checkpoint


def lint_weight_pickles(folder: str, ckpt: Checkpoint) -> list[Finding]:
    """A finding per weights pickle holding unknown objects, with the tensors they kept unread."""
    found = []
    for header in ckpt.files:
        facts = pickle_facts(header)
        if facts is None or not facts.unknown:
            continue
        unread = [v.name for v in facts.values if v.unread]
        found.append(
            finding(
                Severity.WARNING,
                "weights_unknown_objects",
                "weights_unknown_objects",
                unread,
                [os.path.relpath(header.path, folder)],
                name=os.path.relpath(header.path, folder),
                imports=_some(facts.unknown),
            )
        )
    return found


def _some(names: list[str]) -> str:
    shown = ", ".join(_clip(n, 120) for n in names[:5])
    return shown + (f" (+{len(names) - 5})" if len(names) > 5 else "")


def lint_other_pickles(folder: str, names: list[str], weights: set[str]) -> list[Finding]:
    """A finding per pickle beside the weights that imports something outside the allowlist."""
    found = []
    for name in names:
        path = os.path.join(folder, name)
        if os.path.realpath(path) in weights or not name.lower().endswith(PICKLE_SUFFIXES):
            continue
        if not os.path.isfile(path):
            continue
        scan = scan_file(path)
        if scan.status is not ScanStatus.REFUSED:
            continue
        refused = [i.name for i in scan.imports if i.verdict is ImportVerdict.REFUSED]
        found.append(
            finding(
                Severity.WARNING,
                "pickle_imports",
                "pickle_imports",
                files=[name],
                name=name,
                imports=_some(refused),
            )
        )
    return found
