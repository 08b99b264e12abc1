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

    def add(self, a: np.ndarray, b: np.ndarray) -> None:
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
        for j in range(i, full, _SUM_BLOCK):
            self._block(a[j : j + _SUM_BLOCK], b[j : j + _SUM_BLOCK])
        if full < a.size:
            self._carry = (a[full:].copy(), b[full:].copy())

    def _flush(self) -> None:
        if self._carry is not None:
            ca, cb = self._carry
            self._carry = None
            self._block(ca, cb)

    def _block(self, a: np.ndarray, b: np.ndarray) -> None:
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        if not a64.size:
            return
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
            rel[np.isinf(d)] = np.inf  # a value that came back NaN or inf (scale NaN: not > 0)
            self._max_rel = max(self._max_rel, float(np.where(np.isnan(rel), np.inf, rel).max()))
            rel = np.nan_to_num(rel, nan=2.0, posinf=2.0)
            self._rel_sq += _sum_sq(rel)
            self._rel_n += rel.size
            self._err_sq += _sum_sq(d) if np.isfinite(d).all() else math.inf
            finite_b = b64[np.isfinite(b64)]
            self._ref_sq += _sum_sq(finite_b)


def _sum_sq(x: np.ndarray) -> float:
    """Σ x², in numpy's pairwise order: fixed by the length alone (a BLAS dot product may sum
    in an order that depends on the array's address, which would make figures vary by a bit)."""
    return float(np.add.reduce(np.square(x)))


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
