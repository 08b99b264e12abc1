"""Which tensor each row of the table shows when sorted by a column, with what that costs kept:
sort keys per column, and one natural name order shared by the name column, the status column
and every change of target (the natural keys of 200k names take 0.2 s)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from inspector.core.layout import TensorInfo
from inspector.core.natural_order import name_order, natural_keys, regroup_by_status

from .table_sort import sort_keys
from .tensor_columns import Col


class RowSorter:
    """Sorted orders of one list of tensors; :meth:`reset` for new tensors, :meth:`forget`
    when a column's values change (a cast report, a comparison)."""

    def __init__(self) -> None:
        self.reset([])

    def reset(self, tensors: Sequence[TensorInfo]) -> None:
        self._tensors = tensors
        self._keys: dict[int, list] = {}
        self._natural: list[str] | None = None  # natural keys of the names, built on first sort
        self._name_orders: dict[bool, np.ndarray] = {}  # descending? -> rows in name order

    def forget(self, col: int) -> None:
        self._keys.pop(col, None)

    def order(
        self,
        column: int,
        descending: bool,
        status: Sequence[str],
        cast: Mapping[str, Any],
        diff: Mapping[str, Any],
    ) -> list[int]:
        """Tensor indices in display order; stable: ties keep file order, both ways."""
        n = len(self._tensors)
        if column < 0 or column >= len(Col):
            return list(range(n))
        if column == Col.NAME:
            return self._name_order(descending).tolist()
        if column == Col.STATUS:  # differing first, each group in name order: the default view
            return regroup_by_status(self._name_order(descending), status, descending)
        keys = self._keys.get(column)
        if keys is None:
            keys = self._keys[column] = sort_keys(column, self._tensors, cast, diff)
        return sorted(range(n), key=keys.__getitem__, reverse=descending)

    def _name_order(self, descending: bool) -> np.ndarray:
        order = self._name_orders.get(descending)
        if order is None:
            if self._natural is None:
                self._natural = natural_keys([t.name for t in self._tensors])
            order = self._name_orders[descending] = name_order(self._natural, descending)
        return order
