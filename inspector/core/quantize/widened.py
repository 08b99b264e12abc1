"""A block of weight rows widened to F32 once, with the group maxima the schemes' scales start
from: the preview quantizes every block six ways, and each scheme's largest |value| per group
follows from a finer grouping's (max is exact, so the order of reduction cannot change a bit).

The maxima are taken on the bit patterns of |x| as unsigned integers: for values without a sign
the integer order is the float order, and a NaN's pattern is above +inf's (the maximum stays
NaN, as torch's ``amax`` keeps it). A group holding NaN is measured again as numpy's float
maximum measures it, so that the NaN, whose payload can become a scale's byte, is the same.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..dtypes import DType
from ..quant.kernels import to_f32

_INF_BITS = np.uint32(0x7F800000)  # |x| patterns above it are NaN


class WidenedRows:
    """Rows (rows, cols) of a weight of dtype ``sd``, as F32, and their group maxima."""

    def __init__(self, w: np.ndarray, sd: DType) -> None:
        self.sd = sd
        self.x = to_f32(w, sd)
        self._abs_bits: np.ndarray | None = None
        self._maxima: dict[int, np.ndarray] = {}  # groups per row → (rows, groups) uint32 bits

    @property
    def shape(self) -> tuple[int, int]:
        rows, cols = self.x.shape
        return rows, cols

    def prepare(self, groupings: Iterable[int]) -> None:
        """Measure these groupings (groups per row), finest first, so each coarser one reduces
        a finer one's maxima; threads that then read them share the work without racing."""
        for groups in sorted(set(groupings), reverse=True):
            self.absmax(groups)

    def absmax(self, groups: int) -> np.ndarray:
        """(rows, groups): the largest |value| of each group of ``cols // groups`` columns."""
        return self._bits(groups).view(np.float32)

    def block_absmax(self, bh: int, bw: int) -> np.ndarray:
        """(rows / bh, cols / bw) maxima of ``bh``×``bw`` blocks (whole blocks only)."""
        rows, cols = self.shape
        per_row = self._bits(cols // bw)  # (rows, col blocks)
        bits = per_row.reshape(rows // bh, bh, cols // bw).max(axis=1)
        if (bits > _INF_BITS).any():  # as numpy's float maximum gives a NaN (see _bits)
            blocks = np.abs(self.x.reshape(rows // bh, bh, cols // bw, bw))
            return blocks.max(axis=(1, 3))
        return bits.view(np.float32)

    def _bits(self, groups: int) -> np.ndarray:
        found = self._maxima.get(groups)
        if found is not None:
            return found
        rows, _cols = self.shape
        finer = [k for k in self._maxima if k > groups and k % groups == 0]
        if finer:
            source = self._maxima[min(finer)]
        else:
            if self._abs_bits is None:
                self._abs_bits = np.abs(self.x).view(np.uint32)
            source = self._abs_bits
        bits = _group_max(source.reshape(-1), source.shape[1] // groups).reshape(rows, groups)
        nan = bits > _INF_BITS
        if nan.any():  # the NaN numpy's float maximum gives (its payload is a scale's byte)
            bits[nan] = np.abs(self.x.reshape(rows, groups, -1)[nan]).max(axis=1).view(np.uint32)
        self._maxima[groups] = bits
        return bits


def _group_max(flat: np.ndarray, k: int) -> np.ndarray:
    """The maximum of each run of ``k`` elements of ``flat``: by halving (a power of two) or
    by ``k - 1`` strided maxima, both far quicker in numpy than a reduction along a short axis
    (which loops once per group)."""
    if k & (k - 1) == 0:
        while k > 1:
            flat = np.maximum(flat[0::2], flat[1::2])
            k //= 2
        return flat
    if k > 16:
        return flat.reshape(-1, k).max(axis=1)
    runs = flat.reshape(-1, k)
    out = runs[:, 0].copy()
    for j in range(1, k):
        np.maximum(out, runs[:, j], out=out)
    return out
