"""The summary line, recomputed instantly when the target dtype changes.

``inspector.core.summary.summarize`` walks every tensor; for a 200k-tensor checkpoint that is a
noticeable pause on each change of the target chooser. Here the tensors are grouped by dtype once
per checkpoint and the same :class:`~inspector.core.summary.Summary` is built from the groups
(the per-dtype status still comes from the core's ``tensor_status``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from inspector.core.dtypes import DType
from inspector.core.header import TensorInfo
from inspector.core.summary import Summary, tensor_status


@dataclass
class DTypeGroup:
    sample: TensorInfo  # any tensor of this dtype, to ask the core for its status
    count: int = 0
    params: int = 0
    nbytes: int = 0


class DTypeGroups:
    def __init__(self, tensors: Iterable[TensorInfo]) -> None:
        """One pass over the tensors; cheap enough for a worker thread, not for every repaint.

        ``dtype_names[i]`` is tensor i's dtype name, so the table can derive per-row status
        without touching each tensor again.
        """
        groups: dict[str, DTypeGroup] = {}  # in order of first appearance, like Counter
        names: list[str] = []
        add = names.append
        for t in tensors:
            name = t.dtype.name
            add(name)
            g = groups.get(name)
            if g is None:
                g = groups[name] = DTypeGroup(t)
            g.count += 1
            g.params += t.numel
            g.nbytes += t.nbytes
        self.groups = groups
        self.dtype_names = names

    def summary(self, target: DType) -> Summary:
        n = n_differ = params = nbytes = 0
        differing: dict[str, int] = {}
        kept: dict[str, int] = {}
        for name, g in self.groups.items():
            n += g.count
            params += g.params
            nbytes += g.nbytes
            status = tensor_status(g.sample, target)
            if status == "differs":
                n_differ += g.count
                differing[name] = g.count
            elif status == "kept":
                kept[name] = g.count
        return Summary(
            target.name, n, n_differ, params, nbytes, _most_common(differing), _most_common(kept)
        )


def _most_common(counts: dict[str, int]) -> dict[str, int]:
    # Counter.most_common: by count, descending; ties keep first-appearance order (stable sort)
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))
