"""Per-tensor statistics and value histograms, streamed chunk by chunk in float64.

min/max/mean/std are over the finite values; NaN and ±inf are counted apart, because a single
inf would otherwise make every other number meaningless.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

import numpy as np

from .checkpoint import Checkpoint
from .layout import TensorInfo
from .progress import Job, Progress

STATS_CHUNK_BYTES = 4 << 20


@dataclass(frozen=True)
class TensorStats:
    name: str
    numel: int
    min: float | None
    max: float | None
    mean: float | None
    std: float | None  # population standard deviation
    nan: int
    inf: int

    def to_json(self) -> dict[str, object]:
        d = asdict(self)
        del d["name"], d["numel"]
        return d


class _Moments:
    """Chan et al.'s parallel update: exact-enough mean/variance without a second pass.

    Values above ~1e150 would overflow their squares (and sums) in float64, so a chunk whose
    largest magnitude is beyond ``_BIG`` is scaled by a power of two first (exact), and the sum
    of squared deviations is kept as ``m2 * 4**exp``: an F64 tensor near 1e200 gets its true std.
    A chunk whose largest magnitude is below ``_SMALL`` is scaled up the same way, so subnormal
    values keep a non-zero std, and so do values near 1e-150 one float step apart.
    """

    __slots__ = ("count", "exp", "inf", "m2", "max", "mean", "min", "nan")

    def __init__(self) -> None:
        self.count = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.exp = 0  # true M2 = m2 * 4**exp
        self.min = math.inf
        self.max = -math.inf
        self.nan = 0
        self.inf = 0

    def add(self, chunk: np.ndarray) -> None:
        """Fold in a chunk, in cache-sized blocks (the float64 temporaries stay in the cache)."""
        if chunk.dtype.kind == "c":
            chunk = np.abs(chunk)
        for i in range(0, chunk.size, _STATS_BLOCK):
            self._add_block(as_float64(chunk[i : i + _STATS_BLOCK]))

    def _add_block(self, x: np.ndarray) -> None:
        finite = np.isfinite(x)  # float64 whatever the dtype was: integers are all finite
        n_bad = x.size - int(np.count_nonzero(finite))
        if n_bad:
            n_nan = int(np.count_nonzero(np.isnan(x)))
            self.nan += n_nan
            self.inf += n_bad - n_nan
            x = x[finite]
        n = x.size
        if n == 0:
            return
        lo, hi = float(x.min()), float(x.max())
        self.min = min(self.min, lo)
        self.max = max(self.max, hi)
        big = max(-lo, hi)
        # huge chunks are scaled down, tiny ones up (squares of 1e-200 vanish): exact either way
        exp = math.frexp(big)[1] if big > _BIG or 0 < big < _SMALL else 0
        y = np.ldexp(x, -exp) if exp else x  # exact: a power-of-two scale
        mean_s = float(y.mean())
        m2_s = float(np.square(y - mean_s).sum())  # true chunk M2 = m2_s * 4**exp
        self._merge(n, math.ldexp(mean_s, exp), m2_s, exp)

    def _merge(self, n: int, mean: float, m2: float, exp: int) -> None:
        total = self.count + n
        # the larger scale of the two; a side holding only zeros (or nothing) has no scale, and
        # its exp of 0 would flush the other side's tiny M2 to zero
        if self.m2 == 0.0 and self.mean == 0.0:
            e = exp
        elif m2 == 0.0 and mean == 0.0:
            e = self.exp
        else:
            e = max(self.exp, exp)
        own = math.ldexp(self.m2, 2 * (self.exp - e))
        new = math.ldexp(m2, 2 * (exp - e))
        delta = math.ldexp(mean, -e) - math.ldexp(self.mean, -e)  # scaled: never overflows
        self.mean += math.ldexp(delta * (n / total), e)
        self.m2 = own + new + delta * delta * self.count * n / total
        self.exp = e
        self.count = total

    def result(self, t: TensorInfo | _Named) -> TensorStats:
        if self.count == 0:
            return TensorStats(t.name, t.numel, None, None, None, None, self.nan, self.inf)
        std = math.ldexp(math.sqrt(max(self.m2, 0.0) / self.count), self.exp)
        return TensorStats(t.name, t.numel, self.min, self.max, self.mean, std, self.nan, self.inf)


_BIG = 2.0**500  # squares of values below this, summed over 2**60 of them, stay finite
# values above this one float step apart (2**-453) deviate by squares that stay normal (2**-906)
_SMALL = 2.0**-400
_STATS_BLOCK = 1 << 16  # elements per block: 512 KiB of float64


def as_float64(x: np.ndarray) -> np.ndarray:
    """The values as float64, exactly. BF16 is the upper half of an F32, so a bit shift widens
    it (ml_dtypes' element-wise cast is several times slower)."""
    if x.dtype.name == "bfloat16":
        x = (x.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return x.astype(np.float64, copy=False)


def tensor_stats(ckpt: Checkpoint, tensor: TensorInfo) -> TensorStats:
    """Statistics of one tensor, reading it once in bounded chunks."""
    acc = _Moments()
    for chunk in ckpt.iter_chunks(tensor, STATS_CHUNK_BYTES):
        acc.add(chunk)
    return acc.result(tensor)


def values_stats(t: TensorInfo | _Named, chunks: Iterator[np.ndarray]) -> TensorStats:
    """Statistics of any stream of values standing for ``t`` (a quantized weight's rows)."""
    acc = _Moments()
    for chunk in chunks:
        acc.add(chunk)
    return acc.result(t)


def compute_stats(
    ckpt: Checkpoint, tensors: Sequence[TensorInfo] | None = None
) -> Job[dict[str, TensorStats]]:
    """Stats for many tensors; yields Progress after each chunk so callers can cancel."""
    todo = list(ckpt.tensors if tensors is None else tensors)
    total = sum(t.nbytes for t in todo)
    done = 0
    out: dict[str, TensorStats] = {}
    yield Progress(0, total)
    for t in todo:
        acc = _Moments()
        for chunk in ckpt.iter_chunks(t, STATS_CHUNK_BYTES):
            acc.add(chunk)
            done += _chunk_bytes(chunk, t)
            yield Progress(done, total, t.name)
        out[t.name] = acc.result(t)
    yield Progress(total, total)
    return out


def bin_edges(lo: float, hi: float, bins: int) -> np.ndarray:
    """``bins + 1`` evenly spaced edges, also when ``hi - lo`` overflows float64 (±1e308)."""
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
        if lo == hi:  # ±0.5 is lost at this magnitude: widen relative to the value
            lo, hi = lo - abs(lo) * 1e-9, hi + abs(hi) * 1e-9
    t = np.linspace(0.0, 1.0, bins + 1)
    edges = lo * (1.0 - t) + hi * t  # never forms hi - lo, so never inf
    edges[0], edges[-1] = lo, hi
    return np.maximum.accumulate(edges)


def histogram(
    values: np.ndarray, bins: int = 64, value_range: tuple[float, float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Histogram of the finite values as (edges[bins+1], counts[bins]) in float64."""
    x = np.asarray(values).astype(np.float64, copy=False).ravel()
    x = x[np.isfinite(x)]
    if value_range is None:
        value_range = (float(x.min()), float(x.max())) if x.size else (0.0, 1.0)
    edges = bin_edges(*value_range, bins)
    counts, _ = np.histogram(x, bins=edges)
    return edges, counts


def value_histogram(
    ckpt: Checkpoint,
    tensor: TensorInfo,
    bins: int = 64,
    value_range: tuple[float, float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Histogram of a tensor's finite values, streamed (two passes if no range is given)."""
    if value_range is None:
        s = tensor_stats(ckpt, tensor)
        value_range = (s.min, s.max) if s.min is not None else (0.0, 1.0)
    edges = bin_edges(*value_range, bins)
    counts = np.zeros(bins, dtype=np.int64)
    for chunk in ckpt.iter_chunks(tensor, STATS_CHUNK_BYTES):
        x = as_float64(chunk) if chunk.dtype.kind != "c" else np.abs(chunk)
        c, _ = np.histogram(x[np.isfinite(x)], bins=edges)
        counts += c
    return edges, counts


def stats_and_histogram(
    ckpt: Checkpoint, t: TensorInfo, bins: int = 64
) -> Job[tuple[TensorStats, np.ndarray, np.ndarray]]:
    """Stats, then a histogram of the finite values over [min, max], as one cancellable job.

    Two streamed passes; Progress per chunk (over both), so a caller that moves on to another
    tensor stops a big one within a chunk. Returns ``(stats, edges, counts)``.
    """
    return values_stats_and_histogram(
        t, lambda: ckpt.iter_chunks(t, STATS_CHUNK_BYTES), lambda c: _chunk_bytes(c, t), bins
    )


def values_stats_and_histogram(
    t: TensorInfo | _Named,
    chunks: Callable[[], Iterator[np.ndarray]],
    chunk_cost: Callable[[np.ndarray], int],
    bins: int = 64,
) -> Job[tuple[TensorStats, np.ndarray, np.ndarray]]:
    """:func:`stats_and_histogram` of any stream of values: ``chunks()`` starts one pass (it
    is called twice), ``chunk_cost`` says how much of ``t.nbytes`` a chunk stands for. A
    quantized weight's dequantized rows come this way."""
    total = 2 * t.nbytes
    acc = _Moments()
    done = 0
    yield Progress(0, total, t.name)
    for chunk in chunks():
        acc.add(chunk)
        done += chunk_cost(chunk)
        yield Progress(min(done, total), total, t.name)
    s = acc.result(t)
    edges = bin_edges(*((s.min, s.max) if s.min is not None else (0.0, 1.0)), bins)
    counts = np.zeros(bins, dtype=np.int64)
    for chunk in chunks():
        x = np.abs(chunk) if chunk.dtype.kind == "c" else as_float64(chunk)
        counts += np.histogram(x[np.isfinite(x)], bins=edges)[0]
        done += chunk_cost(chunk)
        yield Progress(min(done, total), total, t.name)
    return s, edges, counts


class _Named(Protocol):
    """What a statistics result needs of the thing measured."""

    name: str

    @property
    def numel(self) -> int: ...

    @property
    def nbytes(self) -> int: ...


def _chunk_bytes(chunk: np.ndarray, t: TensorInfo) -> int:
    return chunk.nbytes if not t.dtype.is_packed else (chunk.size * t.dtype.bits) // 8
