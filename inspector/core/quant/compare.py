"""A quantized weight against the weight it came from: the precision the quantization lost.

Both sides are value streams (dequantized rows, or a plain tensor's chunks) cut into blocks
of equal length; the figures are max |Δ|, max relative |Δ|, the relative Frobenius error
‖a − b‖ / ‖b‖ and the SQNR 10·log10(‖b‖² / ‖a − b‖²) in dB, b being the reference side."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

_SUM_BLOCK = 1 << 14  # the sums run over fixed blocks of the stream, however it was chunked
# F32 squares of values in [2⁻⁴⁰, 2⁴⁰] neither overflow nor lose what matters to underflow
_F32_LOW, _F32_HIGH = 2.0**-40, 2.0**40
_F32_TINY = np.float32(2.0**-149)
_RUN = 16  # blocks measured at once (1 MiB of F32 a side: the CPU's cache)


@dataclass
class ErrorFigures:
    """The figures of one tensor pair, fed as chunks in stream order.

    The sums are taken per block of ``_SUM_BLOCK`` elements counted from the tensor's start, so
    the figures do not depend on how the streams were cut: ``diff`` of a quantized file
    reproduces the preview's figures to the last bit. Reading a figure closes the last block.
    """

    _max_abs: float = 0.0
    _max_rel: float = 0.0
    _err_sq: float = 0.0  # Σ (a - b)²
    _ref_sq: float = 0.0  # Σ b²
    _rel_sq: float = 0.0  # Σ (|a - b| / max(|a|, |b|))² (a pair of zeros: 0; past 2: 2)
    _rel_n: int = 0
    _carry: tuple[np.ndarray, np.ndarray] | None = None
    # F32 arithmetic for pairs exact in F32 (a quantized weight against its source: the
    # preview's hot path); False keeps every figure in float64 (diff's plain pairs)
    f32: bool = True

    @property
    def max_abs(self) -> float:
        self._flush()
        return self._max_abs

    @property
    def max_rel(self) -> float:
        self._flush()
        return self._max_rel

    @property
    def err_sq(self) -> float:
        self._flush()
        return self._err_sq

    @property
    def ref_sq(self) -> float:
        self._flush()
        return self._ref_sq

    @property
    def rel_fro_err(self) -> float:
        if self.ref_sq == 0.0:
            return 0.0 if self.err_sq == 0.0 else math.inf
        return math.sqrt(self.err_sq / self.ref_sq)

    @property
    def rms_rel_err(self) -> float:
        """The typical error: the RMS over every element of the relative error whose largest is
        ``max_rel`` (as ``diff`` gives it for a plain pair)."""
        self._flush()
        return math.sqrt(self._rel_sq / self._rel_n) if self._rel_n else 0.0

    @property
    def sqnr_db(self) -> float | None:
        """None when the two are equal (infinite SQNR has no JSON number)."""
        if self.err_sq == 0.0:
            return None
        if self.ref_sq == 0.0 or not math.isfinite(self.err_sq):
            return -math.inf if math.isfinite(self.ref_sq) else None
        return 10.0 * math.log10(self.ref_sq / self.err_sq)

    def add(self, a: np.ndarray, b: np.ndarray, shared: SharedReference | None = None) -> None:
        """The next chunks of both streams; ``shared``: ``b``'s side of the work, done once
        for every stream measured against the same ``b`` (:meth:`SharedReference.of`)."""
        a, b = a.reshape(-1), b.reshape(-1)
        i = 0
        if self._carry is not None:
            ca, cb = self._carry
            i = min(_SUM_BLOCK - ca.size, a.size)
            ca, cb = np.concatenate([ca, a[:i]]), np.concatenate([cb, b[:i]])
            if ca.size < _SUM_BLOCK:
                self._carry = (ca, cb)
                return
            self._carry = None
            self._block(ca, cb)
        full = i + (a.size - i) // _SUM_BLOCK * _SUM_BLOCK
        if shared is not None and (shared.start, shared.size) != (i, a.size):
            shared = None  # made for another place in the stream
        for j in range(i, full, _SUM_BLOCK * _RUN):
            end = min(full, j + _SUM_BLOCK * _RUN)
            rows = shared.rows((j - i) // _SUM_BLOCK, (end - i) // _SUM_BLOCK) if shared else None
            ab = a[j:end].reshape(-1, _SUM_BLOCK), b[j:end].reshape(-1, _SUM_BLOCK)
            self._blocks(*ab, rows)
        if full < a.size:
            self._carry = (a[full:].copy(), b[full:].copy())

    def close(self) -> None:
        """Measure the last, short block now (reading a figure does it too): nothing is left
        carried, so the figures can be sent elsewhere as they are."""
        self._flush()

    def _flush(self) -> None:
        if self._carry is not None:
            ca, cb = self._carry
            self._carry = None
            self._block(ca, cb)

    def _blocks(self, a: np.ndarray, b: np.ndarray, shared: _RefRows | None = None) -> None:
        """Rows of whole blocks: at once in F32 where every row can be, else row by row (so a
        block's figures never depend on its neighbours)."""
        if not (self._f32_pair(a, b) and self._blocks_f32(a, b, shared)):
            for ra, rb in zip(a, b, strict=True):
                self._block(ra, rb)

    def _block(self, a: np.ndarray, b: np.ndarray) -> None:
        if not a.size:
            return
        if self._f32_pair(a, b) and self._blocks_f32(a[None], b[None]):
            return
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        d = np.subtract(a64, b64)
        np.abs(d, out=d)
        top = float(d.max())
        if not math.isfinite(top):  # a NaN or an infinity somewhere: the careful way
            self._block_non_finite(a64, b64)
            return
        self._max_abs = max(self._max_abs, top)
        self._err_sq += _sum_sq(d)
        self._ref_sq += _sum_sq(b64)
        scale = np.abs(a64, out=a64)
        np.maximum(scale, np.abs(b64, out=b64), out=scale)
        scale[scale == 0] = 1.0  # both zero: d is 0 there
        rel = np.divide(d, scale, out=d)
        self._max_rel = max(self._max_rel, float(rel.max()))
        self._rel_sq += _sum_sq(rel)
        self._rel_n += rel.size

    def _f32_pair(self, a: np.ndarray, b: np.ndarray) -> bool:
        return self.f32 and _exact_in_f32(a) and _exact_in_f32(b)

    def _blocks_f32(self, a: np.ndarray, b: np.ndarray, shared: _RefRows | None = None) -> bool:
        """The figures of rows of blocks (k, n) in F32, each row summed pairwise as a block
        alone (relative error of a sum ~1e-7; a third of the float64 way's time, and this is
        the preview's hot path), or False, nothing added, where F32 squares could underflow or
        overflow (a row's largest |b| or |a - b| outside [2⁻⁴⁰, 2⁴⁰]) or a value is not
        finite."""
        a, b = a.astype(np.float32, copy=False), b.astype(np.float32, copy=False)
        with np.errstate(all="ignore"):
            d = np.subtract(a, b)
            np.abs(d, out=d)
            tops = d.max(axis=1)
            floor, ref_tops, ref_sums = shared or _reference_rows(b)
            ok = (ref_tops >= _F32_LOW) & (ref_tops <= _F32_HIGH)
            ok &= (tops == 0) | ((tops >= _F32_LOW) & (tops <= _F32_HIGH))
            if not ok.all():  # also a NaN (no comparison holds) or an infinity
                return False
            top = _exact_top(a, b, d, tops)
            sq = np.square(d)
            err = np.add.reduce(sq, axis=1).tolist()
            scale = np.maximum(floor, np.abs(a, out=sq), out=sq)  # max(|a|, |b|, tiny)
            rel = np.divide(d, scale, out=d)  # both zero: d is 0 there, and 0 / tiny is 0
            self._max_rel = max(self._max_rel, float(rel.max()))
            rel_sq = np.add.reduce(np.square(rel, out=rel), axis=1).tolist()
        self._max_abs = max(self._max_abs, top)
        for e, r, q in zip(err, ref_sums.tolist(), rel_sq, strict=True):  # in stream order
            self._err_sq += e
            self._ref_sq += r
            self._rel_sq += q
        self._rel_n += rel.size
        return True

    def _block_non_finite(self, a64: np.ndarray, b64: np.ndarray) -> None:
        """NaN against NaN is equal; any other NaN or an infinity is an infinite difference
        (its relative error counts as 2, the largest a finite pair can have)."""
        with np.errstate(all="ignore"):
            d = np.abs(a64 - b64)
            same = (a64 == b64) | (np.isnan(a64) & np.isnan(b64))
            d = np.where(same, 0.0, np.where(np.isnan(d), np.inf, d))
            self._max_abs = max(self._max_abs, float(d.max()))
            scale = np.maximum(np.abs(a64), np.abs(b64))
            rel = np.divide(d, scale, out=np.zeros_like(d), where=scale > 0)
            gone = np.isinf(d)  # a value that came back NaN or inf (scale NaN: not > 0)
            rel[gone] = np.inf
            self._max_rel = max(self._max_rel, float(rel.max()))  # d, so rel, holds no NaN
            rel[gone] = 2.0  # elsewhere rel <= 2: |a - b| <= 2 max(|a|, |b|)
            self._rel_sq += _sum_sq(rel)
            self._rel_n += rel.size
            self._err_sq += _sum_sq(d) if np.isfinite(d).all() else math.inf
            finite_b = b64[np.isfinite(b64)]
            self._ref_sq += _sum_sq(finite_b)


def _sum_sq(x: np.ndarray) -> float:
    """Σ x², in numpy's pairwise order: fixed by the length alone (a BLAS dot product may sum
    in an order that depends on the array's address, which would make figures vary by a bit)."""
    return float(np.add.reduce(np.square(x)))


# per row of blocks of the reference: max(|b|, tiny), the largest |b|, Σ b² (F32)
_RefRows = tuple[np.ndarray, np.ndarray, np.ndarray]


def _reference_rows(b: np.ndarray) -> _RefRows:
    floor = np.abs(b)
    tops = floor.max(axis=1)
    np.maximum(floor, _F32_TINY, out=floor)
    return floor, tops, np.add.reduce(np.square(b), axis=1)


@dataclass(frozen=True)
class SharedReference:
    """The reference side's share of the figures for one chunk ``b`` of its stream, made once
    for every stream measured against it (the preview: six schemes against one source block),
    so each :meth:`ErrorFigures.add` does only its own side. Covers the chunk's whole blocks
    from ``start``; None where ``b`` is not exact in F32."""

    start: int  # the first element of the chunk's first whole block
    size: int  # the chunk's elements
    rows_of: _RefRows | None

    @classmethod
    def of(cls, b: np.ndarray, offset: int) -> SharedReference:
        """``b``, the chunk of the stream that begins at element ``offset``."""
        b = b.reshape(-1)
        start = min((-offset) % _SUM_BLOCK, b.size)
        full = start + (b.size - start) // _SUM_BLOCK * _SUM_BLOCK
        rows = None
        if _exact_in_f32(b) and full > start:
            with np.errstate(all="ignore"):
                blocks = b[start:full].astype(np.float32, copy=False)
                rows = _reference_rows(blocks.reshape(-1, _SUM_BLOCK))
        return cls(start, b.size, rows)

    def rows(self, r0: int, r1: int) -> _RefRows | None:
        if self.rows_of is None:
            return None
        floor, tops, sums = self.rows_of
        return floor[r0:r1], tops[r0:r1], sums[r0:r1]


def _exact_top(a: np.ndarray, b: np.ndarray, d: np.ndarray, tops: np.ndarray) -> float:
    """max |a - b| in float64, from the F32 differences ``d`` (rows) and their row maxima:
    rounding never reverses an order, so the largest true difference is among those whose F32
    value is the largest (one or a few), and only they are taken again in float64 (a - b is
    exact in F32 for most pairs a quantization makes, not all: NVFP4 of an F32 weight can give
    2.0000005 times it)."""
    top32 = tops.max()
    if top32 == 0:  # F32 a - b is 0 only where a == b (subnormals keep every difference)
        return 0.0
    rows = np.flatnonzero(tops == top32)
    return max(
        float(np.abs(a[r, at].astype(np.float64) - b[r, at].astype(np.float64)).max())
        for r in rows
        for at in [np.flatnonzero(d[r] == top32)]
    )


def _exact_in_f32(x: np.ndarray) -> bool:
    """F32, F16, or one of ml_dtypes' floats of at most 16 bits (BF16, F8, F6, F4: all F32
    values): the pair's figures can be taken in F32 without a rounding of the inputs."""
    kind, size = x.dtype.kind, x.dtype.itemsize
    if kind == "f":
        return size <= 4
    return (
        kind == "V"
        and size <= 2
        and x.dtype.type.__module__ == "ml_dtypes"
        and ("float" in x.dtype.name)
    )


def aligned(
    xs: Iterator[np.ndarray], ys: Iterator[np.ndarray]
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Two flat value streams as pairs of equally long blocks (the streams chunk differently)."""
    a = b = np.empty(0, np.float32)
    while True:
        if a.size == 0:
            a = next(xs, None)
            if a is None:
                break
            a = a.reshape(-1)
        if b.size == 0:
            b = next(ys, None)
            if b is None:
                break
            b = b.reshape(-1)
        n = min(a.size, b.size)
        yield a[:n], b[:n]
        a, b = a[n:], b[n:]
