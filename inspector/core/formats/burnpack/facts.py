"""What only a Burnpack file knows, kept beside its Header: the format version, each tensor's
``param_id`` and original burn dtype, the typed scalars and any top-level fields of newer burn."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .dtypes import BurnDType, describe
from .spec import FORMAT_NAME

if TYPE_CHECKING:
    from ...layout import Header


@dataclass
class BurnpackFacts:
    version: int
    param_ids: dict[str, int] = field(default_factory=dict)
    # only tensors whose burn dtype is not the plain name of their bytes (Flex32, Bool(...))
    burn_dtypes: dict[str, BurnDType] = field(default_factory=dict)
    scalars: dict[str, dict] = field(
        default_factory=dict
    )  # name -> {"Int"|"UInt"|"Float"|"Bool": v}
    extra_fields: list[str] = field(default_factory=list)  # a newer burn's fields: ignored

    def dtype_text(self, name: str, dtype_name: str) -> str:
        """The dtype as burn names it (``Flex32``, ``Bool(Native)``), else ours."""
        value = self.burn_dtypes.get(name)
        return describe(value) if value is not None else dtype_name

    def scalar_values(self) -> dict[str, object]:
        """Scalars as plain values, for listings (``{"lr": 0.1}``); a NaN or infinite float as
        the strings ``"nan"``, ``"inf"``, ``"-inf"``, as every JSON this tool writes."""
        out: dict[str, object] = {}
        for k, v in self.scalars.items():
            x = next(iter(v.values()))
            if isinstance(x, float) and not math.isfinite(x):
                x = "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
            out[k] = x
        return out


def burnpack_facts(header: Header) -> BurnpackFacts | None:
    """The Burnpack facts of a header Burnpack read; None for any other format."""
    if header.format != FORMAT_NAME or not isinstance(header.facts, BurnpackFacts):
        return None
    return header.facts
