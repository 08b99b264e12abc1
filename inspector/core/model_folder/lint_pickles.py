"""lint: pickles in a model folder that are not its weights (``training_args.bin`` written by
every ``Trainer.save_model``, ``optimizer.pt``, ``rng_state.pth``) are scanned, never loaded: what
they import is a finding, since ``torch.load`` of them would run it."""

from __future__ import annotations

import os

from ..formats.torch_pickle import PICKLE_SUFFIXES, ImportVerdict
from ..scan.walk import ScanStatus, scan_file
from .findings import Finding, Severity, finding


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
                imports=", ".join(refused[:5])
                + (f" (+{len(refused) - 5})" if len(refused) > 5 else ""),
            )
        )
    return found
