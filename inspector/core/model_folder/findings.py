"""What ``lint`` reports: a finding with a severity, one line, and the tensors and files it is about."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    ERROR = "error"  # the folder does not load as it claims
    WARNING = "warning"  # it loads, but not as intended (wrong dtype, bytes wasted)
    INFO = "info"  # worth a look


@dataclass
class Finding:
    severity: Severity
    code: str
    message: str
    tensors: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "severity": self.severity.value,
            "code": self.code,
            "message": self.message,
            "tensors": self.tensors,
            "files": self.files,
        }
