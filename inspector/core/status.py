"""The statuses a tensor can have, as enums shared by the summary, the table, the tree, the CLI
and the JSON (their values are the strings DESIGN.md names, so JSON and old comparisons hold)."""

from __future__ import annotations

from enum import Enum


class TensorStatus(str, Enum):
    """A tensor against the model dtype."""

    MATCH = "match"  # a float tensor already in the model dtype
    DIFFERS = "differs"  # a float tensor in another dtype: what burn-store trips over
    KEPT = "kept"  # not a float (ints, bools): left alone by a float cast
    QUANTIZED = "quantized"  # codes or companions of a quantized weight: a cast dequantizes

    def __str__(self) -> str:
        return self.value


class DiffStatus(str, Enum):
    """A tensor of checkpoint A against the same name in B (``diff``)."""

    EQUAL = "equal"  # same dtype, every value equal
    DTYPE_ONLY = "dtype_only"  # dtypes differ, every value equal
    WITHIN_ATOL = "within_atol"  # values differ, by at most --atol
    DIFFER = "differ"
    SHAPE_MISMATCH = "shape_mismatch"
    ONLY_A = "only_a"
    ONLY_B = "only_b"

    def __str__(self) -> str:
        return self.value

    @property
    def is_equal(self) -> bool:
        """Counts as a pass for the exit code: values equal, or within the tolerance."""
        return self in (DiffStatus.EQUAL, DiffStatus.DTYPE_ONLY, DiffStatus.WITHIN_ATOL)
