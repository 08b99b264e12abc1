"""Find bundled resources (icons, sample checkpoint) in a checkout, a wheel, or a frozen bundle."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    """``resources/``: PyInstaller's _MEIPASS, the wheel's ``inspector/resources``, or the checkout's."""
    here = Path(__file__).resolve().parent
    candidates = []
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        candidates.append(Path(frozen) / "resources")
    candidates += [here / "resources", here.parent / "resources"]
    for c in candidates:
        if c.is_dir():
            return c
    return candidates[-1]


def resource_path(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)
