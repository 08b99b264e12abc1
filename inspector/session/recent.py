"""The recent-files list, behind the two methods of a settings store (QSettings has them)."""

from __future__ import annotations

from typing import Any, Protocol

MAX_RECENT = 10


class SettingsStore(Protocol):
    def value(self, key: str, default: Any = None) -> Any: ...

    def setValue(self, key: str, value: Any) -> None: ...


class MemorySettings:
    """A settings store in a dict: tests, and runs that must not touch the user's settings."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def value(self, key: str, default: Any = None) -> Any:
        return self._values.get(key, default)

    def setValue(self, key: str, value: Any) -> None:
        self._values[key] = value


class RecentFiles:
    """Most recent first, no duplicates, at most ``MAX_RECENT``."""

    KEY = "recent"

    def __init__(self, settings: SettingsStore) -> None:
        self.settings = settings

    def paths(self) -> list[str]:
        value = self.settings.value(self.KEY, [])
        if isinstance(value, str):  # QSettings gives a lone string for a one-item list
            value = [value]
        return [str(v) for v in (value or [])]

    def add(self, path: str) -> None:
        items = [p for p in self.paths() if p != path]
        items.insert(0, path)
        self.settings.setValue(self.KEY, items[:MAX_RECENT])

    def clear(self) -> None:
        self.settings.setValue(self.KEY, [])
