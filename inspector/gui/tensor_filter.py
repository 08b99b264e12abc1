"""Filtering the tensor table: names by words or globs, "only differing", from a precomputed mask
(the source model sorts; the proxy only filters, so 200k rows stay fast)."""

from __future__ import annotations

import fnmatch
import re
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt

from inspector.core.status import TensorStatus

if TYPE_CHECKING:
    from .tensor_table import TensorTableModel

Index = QModelIndex | QPersistentModelIndex


class TensorFilterProxy(QSortFilterProxyModel):
    """Filters by name (substring terms, globs with ``*``/``?``) and "only differing".

    Sorting is delegated to the source model (see :meth:`TensorTableModel.sort`).
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._text = ""
        self._only_differing = False
        self._mask: list[bool] | None = None  # by tensor index
        self._row_mask: list[bool] | None = None  # by source row (the mask in display order)
        self._mask_order: list[int] | None = None  # the source order _row_mask was built for
        self._src: TensorTableModel | None = None
        self.setDynamicSortFilter(False)

    def setSourceModel(self, model: TensorTableModel) -> None:  # type: ignore[override]
        self._src = model
        super().setSourceModel(model)
        model.modelAboutToBeReset.connect(self._drop_mask)
        model.modelReset.connect(self.refresh)

    def _drop_mask(self) -> None:
        self._mask = self._row_mask = self._mask_order = None

    def source(self) -> TensorTableModel:
        return self.sourceModel()  # type: ignore[return-value]

    def set_name_filter(self, text: str) -> None:
        if text != self._text:
            self._text = text
            self.refresh()

    def set_only_differing(self, on: bool) -> None:
        if on != self._only_differing:
            self._only_differing = on
            self.refresh()

    @property
    def only_differing(self) -> bool:
        return self._only_differing

    def refresh(self) -> None:
        """Recompute the mask (e.g. after the target dtype changed) and re-filter."""
        src = self.source()
        mask = self._compute_mask(src) if src is not None else None
        if mask is None and self._mask is None:
            return  # nothing filtered before or after (e.g. right after a reset): no re-filter
        begin = getattr(self, "beginFilterChange", None)
        if begin is not None:
            begin()
        self._mask = mask
        self._row_mask = None if mask is None else self._rebuild_row_mask()
        end = getattr(self, "endFilterChange", None)
        if end is not None:
            end(QSortFilterProxyModel.Direction.Rows)
        else:  # Qt < 6.9
            self.invalidateFilter()

    def _compute_mask(self, src: TensorTableModel) -> list[bool] | None:
        terms = self._text.lower().split()
        if not terms and not self._only_differing:
            return None
        tensors = src.tensors
        names = [t.name.lower() for t in tensors]
        if terms:  # any of the words: "embed lm_head" shows both (a person lists what to see)
            parts = []
            for term in terms:
                if any(c in term for c in "*?["):
                    parts.append(fnmatch.translate(term))  # a glob matches the whole name
                else:
                    parts.append("(?s:.*)" + re.escape(term))  # a word: anywhere in the name
            pat = re.compile("|".join(f"(?:{p})" for p in parts))
            mask = [pat.match(n) is not None for n in names]
        else:
            mask = [True] * len(tensors)
        if self._only_differing:
            mask = [
                m and s is TensorStatus.DIFFERS for m, s in zip(mask, src.statuses(), strict=True)
            ]
        return mask

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        # called once per row on every re-filter: keep it to two attribute reads and an index
        rows = self._row_mask
        if rows is None:
            return True
        if self._mask_order is not self._src._order:  # the source was re-sorted
            rows = self._rebuild_row_mask()
        return rows[source_row]

    def _rebuild_row_mask(self) -> list[bool]:
        mask, order = self._mask, self._src._order
        assert mask is not None
        self._row_mask = [mask[i] for i in order]
        self._mask_order = order
        return self._row_mask

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        src = self.source()
        if src is not None:
            src.sort(column, order)
