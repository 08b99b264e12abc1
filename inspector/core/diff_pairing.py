"""Which tensor of B a tensor of A is compared with, when one side has burn's names and layouts
and the other PyTorch's: as burn-store's ``PyTorchToBurnAdapter`` maps them.

The adapter renames normalisation parameters (``weight``/``bias`` ↔ ``gamma``/``beta``) and
transposes ``Linear`` weights (PyTorch ``[out, in]``, burn ``[in, out]``). It knows module types;
a file does not, so: a name missing on the other side is tried under the other convention, a
2-D pair whose shapes are each other's transpose is compared transposed, and a square 2-D pair
that differs as stored is also compared transposed, the closer reading kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .burn_hint import has_pytorch_layout

if TYPE_CHECKING:
    from .checkpoint import Checkpoint
    from .layout import TensorInfo

_BURN_TO_TORCH = {".gamma": ".weight", ".beta": ".bias"}
_TORCH_TO_BURN = {v: k for k, v in _BURN_TO_TORCH.items()}


@dataclass(frozen=True)
class Pairing:
    """How the two sides are laid out: ``a_is_burn`` says which side has burn's layout."""

    a_is_burn: bool

    def name_in_b(self, name: str, b: Checkpoint) -> str | None:
        """The name of ``name``'s counterpart in B, or None if B has none."""
        if name in b:
            return name
        rename = _BURN_TO_TORCH if self.a_is_burn else _TORCH_TO_BURN
        for old, new in rename.items():
            if name.endswith(old) and (other := name[: -len(old)] + new) in b:
                return other
        return None

    def names_in_a(self, a: Checkpoint, b: Checkpoint) -> set[str]:
        """B's tensors some tensor of A is compared with."""
        return {n for t in a.tensors if (n := self.name_in_b(t.name, b)) is not None}

    @staticmethod
    def transposed(ta: TensorInfo, tb: TensorInfo) -> bool | None:
        """True: compare transposed; None: square, try both; False: as stored."""
        if len(ta.shape) != 2 or len(tb.shape) != 2:
            return False
        if ta.shape == tb.shape:
            return None if ta.shape[0] == ta.shape[1] else False
        return ta.shape == tb.shape[::-1]


def pairing(a: Checkpoint, b: Checkpoint) -> Pairing | None:
    """The pairing of a burn-layout side with a PyTorch-layout one; None when both agree."""
    pa = has_pytorch_layout(a.files[0].format, a.metadata)
    pb = has_pytorch_layout(b.files[0].format, b.metadata)
    return None if pa == pb else Pairing(a_is_burn=not pa)


def transposed_chunks(ckpt: Checkpoint, t: TensorInfo, chunk_elems: int) -> Iterator[np.ndarray]:
    """The values of 2-D ``t`` transposed, in C order, a bounded block of rows at a time."""
    view = ckpt.view(t).T
    rows, cols = view.shape
    step = max(1, chunk_elems // max(1, cols))
    for r in range(0, rows, step):
        yield np.ascontiguousarray(view[r : r + step]).reshape(-1)
