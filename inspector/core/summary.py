"""What a checkpoint looks like against a target dtype: the line both the CLI and window show."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from .dtypes import DType
from .header import TensorInfo


def tensor_status(t: TensorInfo, target: DType) -> str:
    """``match``, ``differs`` or ``kept`` (not a float: FloatCastAdapter leaves it alone)."""
    if not t.dtype.is_float:
        return "kept"
    return "match" if t.dtype is target or t.dtype.name == target.name else "differs"


def matches_target(t: TensorInfo, target: DType) -> bool | None:
    """JSON's ``matches_target``: null for tensors that are not floats."""
    status = tensor_status(t, target)
    return None if status == "kept" else status == "match"


@dataclass(frozen=True)
class Summary:
    target: str
    n_tensors: int
    n_differ: int
    params: int
    nbytes: int
    differing_dtypes: dict[str, int]  # float dtypes that differ from the target, with counts
    kept_dtypes: dict[str, int]  # non-float dtypes, with counts

    def line(self) -> str:
        """``4 of 104 tensors differ from F32 · 22.7 M params · 86.7 MiB · F64×4 I64×1``."""
        parts = [
            f"{self.n_differ:,} of {self.n_tensors:,} tensors differ from {self.target}",
            f"{format_count(self.params)} params",
            format_bytes(self.nbytes),
        ]
        kinds = {**self.differing_dtypes, **self.kept_dtypes}
        if kinds:
            parts.append(" ".join(f"{k}×{v}" for k, v in kinds.items()))
        return " · ".join(parts)


def summarize(tensors: Iterable[TensorInfo], target: DType) -> Summary:
    n = n_differ = params = nbytes = 0
    differing: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    for t in tensors:
        n += 1
        params += t.numel
        nbytes += t.nbytes
        status = tensor_status(t, target)
        if status == "differs":
            n_differ += 1
            differing[t.dtype.name] += 1
        elif status == "kept":
            kept[t.dtype.name] += 1
    return Summary(
        target.name,
        n,
        n_differ,
        params,
        nbytes,
        dict(differing.most_common()),
        dict(kept.most_common()),
    )


def format_bytes(n: int) -> str:
    """Binary units, one decimal: ``86.7 MiB``."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024
        if value < 1024 or unit == "PiB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def format_count(n: int) -> str:
    """Parameter counts as people say them: ``22.7 M``, ``1.3 B``, ``812``."""
    for div, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return str(n)
