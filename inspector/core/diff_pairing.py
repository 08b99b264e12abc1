"""Which tensor of B a tensor of A is compared with when the two are laid out differently:
burn's names and layouts against PyTorch's (below), or a GGUF file against the HF model it was
converted from (:mod:`.gguf_names`: names mapped back, Q/K rows put back in order).

burn against PyTorch: as burn-store's ``PyTorchToBurnAdapter`` maps them.

The adapter renames normalisation parameters (``weight``/``bias`` ↔ ``gamma``/``beta``) and
transposes ``Linear`` weights (PyTorch ``[out, in]``, burn ``[in, out]``). It knows module types;
a file does not, so: a name missing on the other side is tried under the other convention, a
2-D pair whose shapes are each other's transpose is compared transposed, and a square 2-D pair
that differs as stored is also compared transposed, the closer reading kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .burn_hint import has_pytorch_layout
from .gguf_names import GgufNaming, gguf_naming

if TYPE_CHECKING:
    from .checkpoint import Checkpoint
    from .layout import TensorInfo

_BURN_TO_TORCH = {".gamma": ".weight", ".beta": ".bias"}
_TORCH_TO_BURN = {v: k for k, v in _BURN_TO_TORCH.items()}


@dataclass
class Pairing:
    """Which tensor of B each tensor of A is compared with, and how their values line up.

    ``a_is_burn``: one side has burn's layout and the other PyTorch's (None: not that case);
    ``gguf_a``/``gguf_b``: a GGUF side's naming, whose names map back to HF names and whose
    Q/K rows are put back in the HF order.
    """

    a_is_burn: bool | None = None
    gguf_a: GgufNaming | None = None
    gguf_b: GgufNaming | None = None
    from_b: dict[str, str] | None = None  # GGUF B: HF name (as A has it) -> B's name

    def name_in_b(self, name: str, b: Checkpoint) -> str | None:
        """The name of ``name``'s counterpart in B, or None if B has none."""
        if name in b:
            return name
        if self.gguf_a is not None:
            hf = self.gguf_a.hf_name(name, among=b)
            return hf if hf in b else None
        if self.from_b is not None:
            return self.from_b.get(name)
        if self.a_is_burn is None:
            return None
        rename = _BURN_TO_TORCH if self.a_is_burn else _TORCH_TO_BURN
        for old, new in rename.items():
            if name.endswith(old) and (other := name[: -len(old)] + new) in b:
                return other
        return None

    def transposed(self, ta: TensorInfo, tb: TensorInfo) -> bool | None:
        """True: compare transposed; None: square, try both; False: as stored."""
        if self.a_is_burn is None or len(ta.shape) != 2 or len(tb.shape) != 2:
            return False
        if ta.shape == tb.shape:
            return None if ta.shape[0] == ta.shape[1] else False
        return ta.shape == tb.shape[::-1]

    def head_rows(self, name_a: str, name_b: str) -> tuple[int, int]:
        """Rows per head to put back on each side (0: none): GGUF's permuted Q/K rows."""
        a = self.gguf_a.head_rows.get(name_a, 0) if self.gguf_a is not None else 0
        b = self.gguf_b.head_rows.get(name_b, 0) if self.gguf_b is not None else 0
        return a, b


def pairing(a: Checkpoint, b: Checkpoint, names_a: Iterable[str] = ()) -> Pairing | None:
    """How A and B pair up when their layouts differ (burn against PyTorch, GGUF against HF);
    None when they are compared name for name, as stored. ``names_a``: A's names (logical
    weights included), which a GGUF B's names are mapped back to."""
    ga, gb = gguf_naming(a), gguf_naming(b)
    if ga is not None:
        return Pairing(gguf_a=ga)
    if gb is not None:
        among = set(names_a) or {t.name for t in a.tensors}
        return Pairing(
            gguf_b=gb, from_b={gb.hf_name(t.name, among=among): t.name for t in b.tensors}
        )
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
