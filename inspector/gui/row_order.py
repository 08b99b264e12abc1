"""Which tensor each table row shows: the sort's permutation, then the filter's mask over it.

Qt-free list work, so a 200k-row sort or filter is a few C-level passes; the table model
turns each change into one layout change for the view.
"""

from __future__ import annotations


class RowOrder:
    """``rows[r]`` is the tensor index (file order) shown at row ``r``."""

    def __init__(self) -> None:
        self.order: list[int] = []  # every tensor, sorted
        self.mask: list[bool] | None = None  # by tensor index; None: all shown
        self.rows: list[int] = []  # ``order`` with the masked-out tensors left out

    def reset(self, n: int) -> None:
        self.order = list(range(n))
        self.mask = None
        self._update()

    def set_order(self, order: list[int]) -> None:
        self.order = order
        self._update()

    def set_mask(self, mask: list[bool] | None) -> None:
        self.mask = mask
        self._update()

    def row_of(self, index: int) -> int:
        """The row showing tensor ``index``, or -1 when the filter hides it."""
        try:
            return self.rows.index(index)  # a C scan: 1 ms for 200k rows, asked once per click
        except ValueError:
            return -1

    def _update(self) -> None:
        mask = self.mask
        self.rows = self.order if mask is None else [i for i in self.order if mask[i]]
