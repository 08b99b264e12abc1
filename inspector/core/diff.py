"""Compare two checkpoints tensor by tensor, matched by name, streamed.

Floats are compared in float64; integers and bools exactly (2**53 + 1 is not 2**53), their
difference reported in float64. NaN at the same place in both counts as equal (a file compared
with itself is equal); NaN against a number, or inf against a different value, is an infinite
difference.

Statuses: ``equal`` (same dtype, every value equal), ``dtype_only`` (dtypes differ, every value
equal), ``within_atol`` (values differ, by at most ``--atol``), ``differ``, ``shape_mismatch``,
``only_a``, ``only_b``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from .checkpoint import Checkpoint
from .diff_pairing import Pairing, pairing, transposed_chunks
from .diff_result import DiffSummary, TensorDiff, diff_document
from .gguf_names import unpermute_rows
from .layout import TensorInfo
from .progress import Job, Progress
from .quant.compare import ErrorFigures, aligned
from .quant.layout import QuantizedWeight, QuantLayout
from .quant.listing import logical_items
from .quant.values import dequantized_f32
from .status import DiffStatus

STATUSES = tuple(s.value for s in DiffStatus)
_CHUNK_ELEMS = 1 << 20  # a multiple of 4, so packed F4/F6 chunks end on byte boundaries
_BLOCK = 1 << 16  # elements compared at a time: ~12 float64 temporaries of 512 KiB stay in cache


def _elements(ckpt: Checkpoint, t: TensorInfo) -> Iterator[np.ndarray]:
    return ckpt.iter_chunks(t, _CHUNK_ELEMS * t.dtype.bits // 8)


def _as_float64(x: np.ndarray) -> np.ndarray:
    return x if x.dtype.kind == "c" else x.astype(np.float64)


def compare_arrays(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """(max |a-b|, max |a-b| / max(|a|,|b|), Σ of that relative error squared) over one pair of
    equally long, non-empty blocks; a relative error past 2 (inf, NaN) counts as 2 in the sum,
    the largest a finite pair can have."""
    if a.dtype.kind in "iub" and b.dtype.kind in "iub":
        return _compare_integers(a, b)
    a64, b64 = _as_float64(a), _as_float64(b)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(a64 - b64)
        same = (a64 == b64) | (np.isnan(a64) & np.isnan(b64))
        d = np.where(same, 0.0, d)
        d = np.where(np.isnan(d), np.inf, d)  # NaN vs number, or inf - inf of opposite meaning
        max_abs = float(d.max())
        if max_abs == 0.0:
            return 0.0, 0.0, 0.0
        scale = np.maximum(np.abs(a64), np.abs(b64))
        rel = np.divide(d, scale, out=np.zeros_like(d), where=scale > 0)
        rel = np.where(np.isnan(rel) | np.isinf(d), np.inf, rel)
        capped = np.minimum(rel, 2.0)
        return max_abs, float(rel.max()), float(np.add.reduce(capped * capped))


def _as_wide_int(x: np.ndarray) -> np.ndarray:
    """int64, or uint64 for uint64 data (bools as 0/1): exact for every value of its dtype."""
    if x.dtype == np.uint64:
        return x
    return x.astype(np.int64, copy=False)


def _compare_integers(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """Exact equality for integers: float64 would call 2**53 and 2**53 + 1 equal."""
    a, b = _as_wide_int(a), _as_wide_int(b)
    if a.dtype == b.dtype:
        ne = a != b
        if not ne.any():
            return 0.0, 0.0, 0.0
        a, b = a[ne], b[ne]
        # |a - b| exactly, as uint64 (the true difference of two 64-bit values fits in 64 bits)
        ua, ub = a.view(np.uint64), b.view(np.uint64)
        diff = np.where(a >= b, ua - ub, ub - ua)
    else:  # one uint64, one int64: compared as uint64 where the signed value is not negative
        u, s = (a, b) if a.dtype == np.uint64 else (b, a)
        neg = s < 0
        su = s.astype(np.uint64)  # wraps where negative: those are told apart by ``neg``
        ne = neg | (u != su)
        if not ne.any():
            return 0.0, 0.0, 0.0
        u, s, su, neg = u[ne], s[ne], su[ne], neg[ne]
        exact = np.where(u >= su, u - su, su - u)  # |u - s| for s >= 0, in uint64
        # for s < 0, u - s >= 1: float64 can round the magnitude but not make it zero
        diff = np.where(neg, u.astype(np.float64) - s.astype(np.float64), exact)
        a, b = u, s
    d = diff.astype(np.float64)
    scale = np.maximum(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
    rel = np.minimum(d / scale, 2.0)
    return float(d.max()), float((d / scale).max()), float(np.add.reduce(rel * rel))


def diff_tensors(
    a: Checkpoint,
    ta: TensorInfo,
    b: Checkpoint,
    tb: TensorInfo,
    transposed: bool = False,
    heads: tuple[int, int] = (0, 0),
) -> Iterator[tuple[int, float, float, float]]:
    """Yield (bytes of A done, running max abs, running max rel, running Σ rel²) chunk by
    chunk; ``transposed``:
    B's 2-D tensor read transposed (burn's Linear weights against PyTorch's); ``heads``: rows
    per head to put back in order on each side (GGUF's permuted Q/K)."""
    max_abs = max_rel = rel_sq = 0.0
    done = 0
    same_dtype = ta.dtype.name == tb.dtype.name and not ta.dtype.is_packed
    if transposed or any(heads):
        xs, ys = _elements(a, ta), _elements(b, tb)
        if transposed:
            ys = transposed_chunks(b, tb, _CHUNK_ELEMS)
        if heads[0]:
            xs = unpermute_rows(xs, _row_len(ta.shape), heads[0])
        if heads[1]:
            ys = unpermute_rows(ys, _row_len(tb.shape), heads[1])
        pairs = aligned(xs, ys)
    else:
        pairs = zip(_elements(a, ta), _elements(b, tb), strict=True)
    for ca, cb in pairs:
        if not (same_dtype and _same_bytes(ca, cb)):  # equal bytes: equal values, NaNs included
            for i in range(0, ca.size, _BLOCK):
                # blocks that fit the CPU cache: the float64 temporaries never leave it
                m_abs, m_rel, m_sq = compare_arrays(ca[i : i + _BLOCK], cb[i : i + _BLOCK])
                if m_abs > max_abs:
                    max_abs = m_abs
                if m_rel > max_rel:
                    max_rel = m_rel
                rel_sq += m_sq
        done += ca.size * ta.dtype.bits // 8
        yield done, max_abs, max_rel, rel_sq


def diff_quantized(
    a: Checkpoint,
    b: Checkpoint,
    atol: float,
    quant_a: QuantLayout | None,
    quant_b: QuantLayout | None,
) -> Job[list[TensorDiff]]:
    """:func:`diff_checkpoints` by logical weight: a quantized weight's dequantized values
    against the other side's (the precision the quantization lost, with Frobenius and SQNR)."""
    items_a = logical_items(a.tensors, quant_a)
    items_b = {i.name: i for i in logical_items(b.tensors, quant_b)}
    pair = pairing(a, b, [i.name for i in items_a])
    name_b = {i.name: _counterpart(i.name, items_b, pair) for i in items_a}
    total = sum(i.nbytes for i in items_a if name_b[i.name] is not None)
    done = 0
    out: list[TensorDiff] = []
    yield Progress(0, total)
    for ia in items_a:
        counterpart = name_b[ia.name]  # None: none in B (a tensor of B may be named "")
        ib = items_b.get(counterpart) if counterpart is not None else None
        da, sa = _dtype_and_shape(ia)
        if ib is None:
            out.append(TensorDiff(ia.name, DiffStatus.ONLY_A, None, None, da, None, sa))
            continue
        db, sb = _dtype_and_shape(ib)
        if sa != sb:
            out.append(TensorDiff(ia.name, DiffStatus.SHAPE_MISMATCH, None, None, da, db, sa, sb))
            done += ia.nbytes
            continue
        quantized = [i for i in (ia, ib) if isinstance(i, QuantizedWeight)]
        # a quantized weight is measured as the preview measured it (in F32); a plain pair in
        # float64, as diff measures every plain pair
        figures = ErrorFigures(f32=bool(quantized))
        ha, hb = pair.head_rows(ia.name, ib.name) if pair is not None else (0, 0)
        xs, ys = _values(a, ia), _values(b, ib)
        xs = unpermute_rows(xs, _row_len(sa), ha) if ha else xs
        ys = unpermute_rows(ys, _row_len(sb), hb) if hb else ys
        for xa, xb in aligned(xs, ys):
            figures.add(xa, xb)
            done += ia.nbytes * xa.size // max(1, ia.numel)
            yield Progress(min(done, total), total, ia.name)
        status = (
            (DiffStatus.EQUAL if da == db else DiffStatus.DTYPE_ONLY)
            if figures.max_abs == 0.0
            else DiffStatus.WITHIN_ATOL
            if figures.max_abs <= atol
            else DiffStatus.DIFFER
        )
        schemes = [i.scheme.value for i in quantized]
        out.append(
            TensorDiff(ia.name, status, figures.max_abs, figures.max_rel, da, db, sa, sb,
                       "/".join(schemes) or None,
                       figures.rel_fro_err if schemes else None,
                       figures.sqnr_db if schemes else None,
                       figures.rms_rel_err if schemes else None,
                       name_b=ib.name if ib.name != ia.name else None)
        )  # fmt: skip
    names_a = {n for n in name_b.values() if n is not None}
    for ib in items_b.values():
        if ib.name not in names_a:
            db, sb = _dtype_and_shape(ib)
            out.append(TensorDiff(ib.name, DiffStatus.ONLY_B, None, None, None, db, None, sb))
    yield Progress(total, total)
    return out


def _dtype_and_shape(item: TensorInfo | QuantizedWeight) -> tuple[str, tuple[int, ...]]:
    if isinstance(item, QuantizedWeight):
        return item.stored_dtype, tuple(item.shape)
    return item.dtype.name, tuple(item.shape)


def _values(ckpt: Checkpoint, item: TensorInfo | QuantizedWeight) -> Iterator[np.ndarray]:
    if isinstance(item, QuantizedWeight):
        return dequantized_f32(ckpt, item)
    return _elements(ckpt, item)


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return a.nbytes == b.nbytes and bool(np.array_equal(a.view(np.uint8), b.view(np.uint8)))


def diff_checkpoints(
    a: Checkpoint,
    b: Checkpoint,
    atol: float = 0.0,
    quant_a: QuantLayout | None = None,
    quant_b: QuantLayout | None = None,
) -> Job[list[TensorDiff]]:
    """Tensors of A in A's order, then those only in B; values compared in float64. A
    quantized side (``quant_a``/``quant_b``) is compared by logical weight, dequantized."""
    if (quant_a is not None and quant_a.weights) or (quant_b is not None and quant_b.weights):
        return (yield from diff_quantized(a, b, atol, quant_a, quant_b))
    pair = pairing(a, b)
    counterpart = {t.name: _counterpart(t.name, b, pair) for t in a.tensors}
    total = sum(t.nbytes for t in a.tensors if counterpart[t.name] is not None)
    done = 0
    out: list[TensorDiff] = []
    yield Progress(0, total)
    for ta in a.tensors:
        name_b = counterpart[ta.name]
        if name_b is None:
            out.append(
                TensorDiff(ta.name, DiffStatus.ONLY_A, None, None, ta.dtype.name, None, ta.shape)
            )
            continue
        tb = b[name_b]
        turn = pair.transposed(ta, tb) if pair is not None else False
        if ta.shape != tb.shape and not turn:
            out.append(
                TensorDiff(
                    ta.name,
                    DiffStatus.SHAPE_MISMATCH,
                    None,
                    None,
                    ta.dtype.name,
                    tb.dtype.name,
                    ta.shape,
                    tb.shape,
                )
            )
            done += ta.nbytes
            continue
        max_abs = max_rel = rel_sq = 0.0
        base = done
        heads = pair.head_rows(ta.name, name_b) if pair is not None else (0, 0)
        for part, run_abs, run_rel, run_sq in diff_tensors(a, ta, b, tb, bool(turn), heads):
            max_abs, max_rel, rel_sq = run_abs, run_rel, run_sq
            done = base + part
            yield Progress(done, total, ta.name)
        if turn is None and max_abs != 0.0:  # square: burn's Linear weight is stored transposed
            t_abs = t_rel = t_sq = 0.0
            for _part, run_abs, run_rel, run_sq in diff_tensors(a, ta, b, tb, transposed=True):
                t_abs, t_rel, t_sq = run_abs, run_rel, run_sq
                yield Progress(done, total, ta.name)
            if t_abs < max_abs:
                max_abs, max_rel, rel_sq, turn = t_abs, t_rel, t_sq, True
        numel = ta.numel
        rms = math.sqrt(rel_sq / numel) if numel else 0.0
        done = base + ta.nbytes
        if max_abs == 0.0:
            status = DiffStatus.EQUAL if ta.dtype.name == tb.dtype.name else DiffStatus.DTYPE_ONLY
        elif max_abs <= atol:
            status = DiffStatus.WITHIN_ATOL
        else:
            status = DiffStatus.DIFFER
        out.append(
            TensorDiff(ta.name, status, max_abs, max_rel, ta.dtype.name, tb.dtype.name, ta.shape,
                       tb.shape, rms_rel_err=rms, name_b=None if name_b == ta.name else name_b,
                       transposed=bool(turn))
        )  # fmt: skip
    matched = {n for n in counterpart.values() if n is not None}  # B's names A was paired with
    for tb in b.tensors:
        if tb.name not in matched:
            out.append(
                TensorDiff(
                    tb.name, DiffStatus.ONLY_B, None, None, None, tb.dtype.name, None, tb.shape
                )
            )
    yield Progress(total, total)
    return out


def _row_len(shape: tuple[int, ...]) -> int:
    """Values per row of dimension 0 (1 for a bias)."""
    n = 1
    for d in shape[1:]:
        n *= d
    return n


def _counterpart(name: str, b: Checkpoint | dict, pair: Pairing | None) -> str | None:
    if pair is None:
        return name if name in b else None
    return pair.name_in_b(name, b)  # type: ignore[arg-type]


__all__ = ["DiffSummary", "TensorDiff", "diff_checkpoints", "diff_document", "diff_tensors"]
