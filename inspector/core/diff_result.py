"""What a diff comes to: a row per tensor, the ``diff --json`` document and the counts the
window and CLI print."""

from __future__ import annotations

from dataclasses import dataclass

from .status import DiffStatus


@dataclass(frozen=True)
class TensorDiff:
    name: str
    status: DiffStatus
    max_abs_diff: float | None
    max_rel_diff: float | None
    dtype_a: str | None
    dtype_b: str | None
    shape_a: tuple[int, ...] | None = None
    shape_b: tuple[int, ...] | None = None
    # a quantized side (dequantized for the comparison): the scheme and the precision it lost
    quant: str | None = None
    rel_fro_err: float | None = None
    sqnr_db: float | None = None
    # the typical error beside max_rel_diff: the RMS over every element of the same relative error
    rms_rel_err: float | None = None
    # burn against PyTorch: B's tensor under its own name, and whether it was read transposed
    name_b: str | None = None
    transposed: bool = False

    @property
    def is_equal(self) -> bool:
        """Equal values (within atol), whatever the dtypes."""
        return DiffStatus(self.status).is_equal

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "status": str(self.status),
            "max_abs_diff": self.max_abs_diff,
            "max_rel_diff": self.max_rel_diff,
            "dtype_a": self.dtype_a,
            "dtype_b": self.dtype_b,
            "shape_a": list(self.shape_a) if self.shape_a is not None else None,
            "shape_b": list(self.shape_b) if self.shape_b is not None else None,
            **(
                {"quant": self.quant, "rel_fro_err": self.rel_fro_err, "sqnr_db": self.sqnr_db}
                if self.quant is not None
                else {}
            ),
            **({"rms_rel_err": self.rms_rel_err} if self.rms_rel_err is not None else {}),
            **({"name_b": self.name_b} if self.name_b is not None else {}),
            **({"transposed": True} if self.transposed else {}),
        }


def diff_document(diffs: list[TensorDiff]) -> str:
    """``diff --json``: one row per tensor, then ``equal`` (the exit code's verdict)."""
    from .json_output import rows_document

    return rows_document([d.to_json() for d in diffs], {"equal": all(d.is_equal for d in diffs)})


@dataclass(frozen=True)
class DiffSummary:
    """Counts of a diff, by the same statuses ``diff`` prints: the window and CLI agree."""

    counts: dict[DiffStatus, int]
    worst_abs: float  # the largest max |Δ| over tensors present in both

    @classmethod
    def of(cls, diffs: list[TensorDiff]) -> DiffSummary:
        counts: dict[DiffStatus, int] = {}
        worst = 0.0
        for d in diffs:
            status = DiffStatus(d.status)
            counts[status] = counts.get(status, 0) + 1
            if d.max_abs_diff is not None and d.max_abs_diff > worst:
                worst = d.max_abs_diff
        return cls(counts, worst)

    def count(self, *statuses: DiffStatus) -> int:
        return sum(self.counts.get(s, 0) for s in statuses)

    @property
    def n_equal(self) -> int:
        """Values equal (same dtype or not)."""
        return self.count(DiffStatus.EQUAL, DiffStatus.DTYPE_ONLY)

    @property
    def n_within(self) -> int:
        return self.count(DiffStatus.WITHIN_ATOL)

    @property
    def n_differ(self) -> int:
        return self.count(DiffStatus.DIFFER)

    @property
    def n_unmatched(self) -> int:
        """Only in one file, or shaped differently: no values compared."""
        return self.count(DiffStatus.ONLY_A, DiffStatus.ONLY_B, DiffStatus.SHAPE_MISMATCH)

    @property
    def is_equal(self) -> bool:
        return self.n_differ == 0 and self.n_unmatched == 0
