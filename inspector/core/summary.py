"""What a checkpoint looks like against a target dtype: the line both the CLI and window show."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from .dtypes import DType
from .layout import TensorInfo
from .quant.layout import QuantLayout
from .status import TensorStatus
from .wording import format_bytes


def tensor_status(t: TensorInfo, target: DType) -> TensorStatus:
    """``MATCH``, ``DIFFERS`` or ``KEPT`` (not a float: FloatCastAdapter leaves it alone)."""
    if not t.dtype.is_float:
        return TensorStatus.KEPT
    if t.dtype.name == target.name:
        return TensorStatus.MATCH
    return TensorStatus.DIFFERS


def matches_target(t: TensorInfo, target: DType) -> bool | None:
    """JSON's ``matches_target``: null for tensors that are not floats."""
    status = tensor_status(t, target)
    return None if status is TensorStatus.KEPT else status is TensorStatus.MATCH


@dataclass(frozen=True)
class Summary:
    target: str
    n_tensors: int
    n_differ: int
    params: int
    nbytes: int
    differing_dtypes: dict[str, int]  # float dtypes that differ from the target, with counts
    kept_dtypes: dict[str, int]  # non-float dtypes, with counts
    n_quantized: int = 0  # quantized weights (each one tensor of n_tensors, its companions none)
    quant_scheme: str | None = None

    def line(self) -> str:
        """``4 of 104 tensors differ from F32 · 22.7 M params · 86.7 MiB · F64×4 I64×1``; a
        quantized checkpoint adds ``· 7 quantized (compressed-tensors pack-quantized)``."""
        parts = [f"{self.n_differ:,} of {self.n_tensors:,} tensors differ from {self.target}"]
        if self.n_quantized:
            parts.append(f"{self.n_quantized:,} quantized ({self.quant_scheme})")
        parts += [f"{format_count(self.params)} params", format_bytes(self.nbytes)]
        kinds = {**self.differing_dtypes, **self.kept_dtypes}
        if kinds:
            parts.append(" ".join(f"{k}×{v}" for k, v in kinds.items()))
        return " · ".join(parts)


class DTypeGroups:
    """Tensors grouped by dtype, in one pass: the summary for any target is then instant.

    The window rebuilds the summary line on every change of the target chooser; for a
    200k-tensor checkpoint a walk over all tensors each time would be a noticeable pause.
    ``dtype_names[i]`` is tensor i's group key (its dtype name, or :data:`QUANTIZED_GROUP` for
    the codes and companions of a quantized weight), so a table derives per-row status from it.
    """

    def __init__(self, tensors: Iterable[TensorInfo], quant: QuantLayout | None = None) -> None:
        groups: dict[str, _Group] = {}  # in order of first appearance
        names: list[str] = []
        add = names.append
        prod = math.prod
        part_of = quant.part_of if quant is not None else {}
        self.quant = quant
        for t in tensors:  # fields, not properties: this loop runs on every open
            name = QUANTIZED_GROUP if part_of and t.name in part_of else t.dtype_name
            add(name)
            g = groups.get(name)
            if g is None:
                g = groups[name] = _Group(t)
            g.count += 1
            g.params += prod(t.shape)
            start, end = t.data_offsets
            g.nbytes += end - start
        self.groups = groups
        self.dtype_names = names

    def group_status(self, key: str, target: DType) -> TensorStatus:
        """The status of every tensor in group ``key`` against ``target``."""
        if key == QUANTIZED_GROUP:
            return TensorStatus.QUANTIZED
        return tensor_status(self.groups[key].sample, target)

    def summary(self, target: DType) -> Summary:
        n = n_differ = params = nbytes = 0
        differing: dict[str, int] = {}
        kept: dict[str, int] = {}
        quant = self.quant if self.quant is not None and self.quant.weights else None
        for name, g in self.groups.items():
            nbytes += g.nbytes
            if name == QUANTIZED_GROUP:
                continue  # counted below, by logical weight
            n += g.count
            params += g.params
            status = tensor_status(g.sample, target)
            if status is TensorStatus.DIFFERS:
                n_differ += g.count
                differing[name] = g.count
            elif status is TensorStatus.KEPT:
                kept[name] = g.count
        n_quant = 0
        if quant is not None:
            n_quant = len(quant.weights)
            n += n_quant
            params += sum(w.params for w in quant.weights.values())
        return Summary(
            target.name, n, n_differ, params, nbytes, _most_common(differing),
            _most_common(kept), n_quant, quant.scheme_text if quant is not None else None,
        )  # fmt: skip


@dataclass
class _Group:
    sample: TensorInfo  # any tensor of this dtype: its status stands for the whole group
    count: int = 0
    params: int = 0
    nbytes: int = 0


def _most_common(counts: dict[str, int]) -> dict[str, int]:
    """By count, descending; ties keep first-appearance order (like Counter.most_common)."""
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


QUANTIZED_GROUP = "quantized"  # the group key of every stored tensor of a quantized weight


def summarize(
    tensors: Iterable[TensorInfo], target: DType, quant: QuantLayout | None = None
) -> Summary:
    return DTypeGroups(tensors, quant).summary(target)


def format_count(n: int) -> str:
    """Parameter counts as people say them: ``22.7 M``, ``1.3 B``, ``812``."""
    for div, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n / div >= 0.99995:  # 999,960 is "1.0 M", not "1000.0 k"
            return f"{n / div:.1f} {unit}"
    return str(n)
