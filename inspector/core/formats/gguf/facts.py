"""What only a GGUF file knows, kept beside its Header: its key/values (long arrays summarised),
each tensor's ggml type and its dimensions in the file's own order (innermost first)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .spec import DEFAULT_ALIGNMENT, FORMAT_NAME, GgmlType

if TYPE_CHECKING:
    from ...layout import Header


@dataclass(frozen=True)
class ArraySummary:
    """A long array (a tokenizer's 32k tokens): its element type and length, not its values."""

    of: str
    count: int

    def __str__(self) -> str:
        return f"[{self.count:,} × {self.of}]"

    def to_json(self) -> dict[str, object]:
        return {"array_of": self.of, "count": self.count}


@dataclass
class GgufFacts:
    version: int
    alignment: int = DEFAULT_ALIGNMENT
    kv: dict[str, object] = field(default_factory=dict)
    types: dict[str, GgmlType] = field(default_factory=dict)  # tensor name -> ggml type
    dims: dict[str, tuple[int, ...]] = field(default_factory=dict)  # as stored, innermost first

    def text(self, key: str) -> str:
        """A key's value as one line of text (the Metadata tab, ``Header.metadata``)."""
        v = self.kv[key]
        return str(v) if not isinstance(v, str) else v

    def shape(self, name: str) -> tuple[int, ...]:
        """The tensor's shape in the order people know from the HF model (outermost first)."""
        return tuple(reversed(self.dims[name]))

    @property
    def architecture(self) -> str | None:
        arch = self.kv.get("general.architecture")
        return arch if isinstance(arch, str) else None

    def type_counts(self) -> dict[str, int]:
        """``{"Q4_K": 154, "Q6_K": 1, "F32": 65}``, most common first."""
        counts: dict[str, int] = {}
        for t in self.types.values():
            counts[t.name] = counts.get(t.name, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def kv_json(self) -> dict[str, object]:
        return {k: v.to_json() if isinstance(v, ArraySummary) else v for k, v in self.kv.items()}


def gguf_facts(header: Header) -> GgufFacts | None:
    if header.format != FORMAT_NAME or not isinstance(header.facts, GgufFacts):
        return None
    return header.facts
