"""A tensor's values as a small image: each cell one block of rows × columns of the matrix.

The matrix is the tensor with its leading dimensions folded into the rows (``[a, b, c]`` is
``a·b`` rows of ``c``; a 1-D tensor is one row), at most ``max_side`` cells a side. Each cell
holds, of the finite values in its block, the one of largest magnitude with its sign (``peak``:
an outlier stays visible however far it is downsampled) or their mean (``mean``). NaN and ±inf
are never folded in: they are counted per cell, and a cell with no finite value is NaN.

The values are streamed in bounded chunks (``Checkpoint.iter_chunks``, or a quantized weight's
rows dequantized a block at a time), so memory stays at a few MB whatever the tensor's size.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .progress import Job, Progress
from .quant import rows as qrows
from .quant.kernels import to_f32
from .stats import as_float64

if TYPE_CHECKING:
    from .checkpoint import Checkpoint
    from .layout import TensorInfo
    from .quant.layout import QuantizedWeight

HEATMAP_CHUNK_VALUES = 1 << 18  # per read: each float64 work array is 2 MiB
MODES = ("peak", "mean")


@dataclass(frozen=True)
class Heatmap:
    name: str
    rows: int  # of the matrix
    cols: int
    values: np.ndarray  # float64 [cell rows, cell cols]; NaN where a block has no finite value
    nonfinite: np.ndarray  # int64, NaN and ±inf per cell
    mode: str
    dequantized: bool = False

    @property
    def row_edges(self) -> np.ndarray:
        """Cell row ``i`` covers matrix rows ``row_edges[i]:row_edges[i + 1]``."""
        return _edges(self.rows, self.values.shape[0])

    @property
    def col_edges(self) -> np.ndarray:
        return _edges(self.cols, self.values.shape[1])

    @property
    def largest(self) -> float | None:
        """The largest |cell| (None: no finite value)."""
        a = np.abs(self.values[np.isfinite(self.values)])
        return float(a.max()) if a.size else None

    def colour_limit(self, quantile: float = 0.995) -> tuple[float, bool]:
        """The symmetric limit ±m of a colour scale centred at 0, and whether it clips: the
        largest |cell| unless a few outliers (beyond 4× the ``quantile`` of |cells|) would wash
        every other cell out; then that quantile (outliers saturate, their value in tooltips)."""
        a = np.abs(self.values[np.isfinite(self.values)])
        if a.size == 0:
            return 1.0, False
        top = float(a.max())
        q = float(np.quantile(a, quantile))
        if q > 0 and top > 4 * q:
            return q, True
        return (top if top > 0 else 1.0), False

    def cell_of(self, row: int, col: int) -> tuple[int, int]:
        """The cell holding element ``(row, col)`` of the matrix."""
        return row * self.values.shape[0] // self.rows, col * self.values.shape[1] // self.cols


def matrix_shape(shape: tuple[int, ...]) -> tuple[int, int]:
    """Rows and columns of a tensor seen as a matrix: leading dimensions folded into the rows."""
    if len(shape) == 0:
        return 1, 1
    return math.prod(shape[:-1]), shape[-1]


def _edges(n: int, cells: int) -> np.ndarray:
    """Where each of ``cells`` bins starts in ``range(n)`` (element ``i`` is in bin
    ``i * cells // n``), plus ``n`` at the end."""
    j = np.arange(cells + 1, dtype=np.int64)
    return (j * n + cells - 1) // cells


class _Folder:
    """Folds a stream of the matrix's values (C order, any chunking) into the cells."""

    def __init__(self, rows: int, cols: int, max_side: int) -> None:
        self.rows, self.cols = rows, cols
        self.hr, self.hc = max(1, min(rows, max_side)), max(1, min(cols, max_side))
        self.col_starts = _edges(cols, self.hc)[:-1]
        shape = (self.hr, self.hc)
        self.hi = np.full(shape, -np.inf)
        self.lo = np.full(shape, np.inf)
        self.sum = np.zeros(shape)
        self.finite = np.zeros(shape, dtype=np.int64)
        self.pos = 0  # C-order position of the next value

    def add(self, chunk: np.ndarray) -> None:
        x = np.abs(chunk) if chunk.dtype.kind == "c" else as_float64(chunk.reshape(-1))
        x = x.reshape(-1)
        i = 0
        while i < x.size:
            r, c = divmod(self.pos, self.cols)
            if c or x.size - i < self.cols:  # a piece of one row
                n = min(self.cols - c, x.size - i)
                self._fold_rows(x[i : i + n].reshape(1, n), r, c)
            else:  # whole rows
                n = (x.size - i) // self.cols * self.cols
                self._fold_rows(x[i : i + n].reshape(-1, self.cols), r, 0)
            i += n
            self.pos += n

    def _fold_rows(self, block: np.ndarray, r0: int, c0: int) -> None:
        """``block`` holds rows ``r0…`` from column ``c0`` (one row when c0 > 0)."""
        n, w = block.shape
        j0 = c0 * self.hc // self.cols
        j1 = (c0 + w - 1) * self.hc // self.cols + 1
        cuts = np.maximum(self.col_starts[j0:j1], c0) - c0
        rb = np.arange(r0, r0 + n, dtype=np.int64) * self.hr // self.rows
        row_cuts = np.flatnonzero(np.diff(rb)) + 1
        row_cuts = np.concatenate(([0], row_cuts))
        i0, i1 = int(rb[0]), int(rb[-1]) + 1
        ok = np.isfinite(block)
        for out, fill, op in (
            (self.hi, -np.inf, np.maximum),
            (self.lo, np.inf, np.minimum),
            (self.sum, 0.0, np.add),
        ):
            v = np.where(ok, block, fill)
            v = op.reduceat(op.reduceat(v, cuts, axis=1), row_cuts, axis=0)
            op(out[i0:i1, j0:j1], v, out=out[i0:i1, j0:j1])
        counts = np.add.reduceat(np.add.reduceat(ok.astype(np.int64), cuts, axis=1), row_cuts, 0)
        self.finite[i0:i1, j0:j1] += counts

    def result(self, name: str, mode: str, dequantized: bool) -> Heatmap:
        re, ce = _edges(self.rows, self.hr), _edges(self.cols, self.hc)
        size = np.outer(np.diff(re), np.diff(ce))
        with np.errstate(invalid="ignore", divide="ignore"):
            if mode == "mean":
                values = self.sum / self.finite
            else:
                values = np.where(self.hi >= -self.lo, self.hi, self.lo)
        values = np.where(self.finite > 0, values, np.nan)
        return Heatmap(name, self.rows, self.cols, values, size - self.finite, mode, dequantized)


def heatmap(
    ckpt: Checkpoint,
    t: TensorInfo,
    max_side: int = 512,
    mode: str = "peak",
    weight: QuantizedWeight | None = None,
    chunk_values: int = HEATMAP_CHUNK_VALUES,
) -> Job[Heatmap]:
    """The tensor (or, with ``weight``, its dequantized values) downsampled to at most
    ``max_side × max_side`` cells, one streamed pass; yields Progress per chunk."""
    if mode not in MODES:
        raise ValueError(f"unknown heatmap mode {mode!r} (one of {', '.join(MODES)})")
    shape = tuple(weight.shape) if weight is not None else tuple(t.shape)
    rows, cols = matrix_shape(shape)
    total = weight.nbytes if weight is not None else t.nbytes
    name = weight.name if weight is not None else t.name
    yield Progress(0, total, name)
    if rows * cols == 0:  # no cells (and [0, 2**64 - 1] has no edges either)
        empty = np.zeros((0, 0))
        return Heatmap(name, rows, cols, empty, empty.astype(np.int64), mode, weight is not None)
    folder = _Folder(rows, cols, max_side)
    chunks = (
        _dequantized_chunks(ckpt, weight, chunk_values * 4)  # F32 rows
        if weight is not None
        else ckpt.iter_chunks(t, max(1, chunk_values * t.dtype.bits // 8))
    )
    for chunk in chunks:
        folder.add(chunk)
        yield Progress(min(total, folder.pos * total // (rows * cols)), total, name)
    return folder.result(name, mode, weight is not None)


def _dequantized_chunks(
    ckpt: Checkpoint, w: QuantizedWeight, chunk_bytes: int
) -> Iterator[np.ndarray]:
    plan = qrows.prepare(ckpt, w)
    for values in qrows.chunks(ckpt, plan, chunk_bytes):
        yield to_f32(values, plan.compute)


__all__ = ["HEATMAP_CHUNK_VALUES", "MODES", "Heatmap", "heatmap", "matrix_shape"]
