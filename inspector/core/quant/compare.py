"""A quantized weight against the weight it came from: the precision the quantization lost.

Both sides are value streams (dequantized rows, or a plain tensor's chunks) cut into blocks
of equal length; the figures are max |Δ|, max relative |Δ|, the relative Frobenius error
‖a − b‖ / ‖b‖ and the SQNR 10·log10(‖b‖² / ‖a − b‖²) in dB, b being the reference side."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np


@dataclass
class ErrorFigures:
    max_abs: float = 0.0
    max_rel: float = 0.0
    err_sq: float = 0.0  # Σ (a - b)²
    ref_sq: float = 0.0  # Σ b²

    @property
    def rel_fro_err(self) -> float:
        if self.ref_sq == 0.0:
            return 0.0 if self.err_sq == 0.0 else math.inf
        return math.sqrt(self.err_sq / self.ref_sq)

    @property
    def sqnr_db(self) -> float | None:
        """None when the two are equal (infinite SQNR has no JSON number)."""
        if self.err_sq == 0.0:
            return None
        if self.ref_sq == 0.0 or not math.isfinite(self.err_sq):
            return -math.inf if math.isfinite(self.ref_sq) else None
        return 10.0 * math.log10(self.ref_sq / self.err_sq)

    def add(self, a: np.ndarray, b: np.ndarray) -> None:
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        with np.errstate(all="ignore"):
            d = np.abs(a64 - b64)
            same = (a64 == b64) | (np.isnan(a64) & np.isnan(b64))
            d = np.where(same, 0.0, np.where(np.isnan(d), np.inf, d))
            if d.size:
                self.max_abs = max(self.max_abs, float(d.max()))
                scale = np.maximum(np.abs(a64), np.abs(b64))
                rel = np.divide(d, scale, out=np.zeros_like(d), where=scale > 0)
                self.max_rel = max(self.max_rel, float(np.nan_to_num(rel, nan=np.inf).max()))
            self.err_sq += float(np.dot(d, d)) if np.isfinite(d).all() else math.inf
            finite_b = b64[np.isfinite(b64)]
            self.ref_sq += float(np.dot(finite_b, finite_b))


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
