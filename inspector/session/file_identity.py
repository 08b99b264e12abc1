"""Which version of a file a result belongs to: a file overwritten under the same path (a cast
whose output is a file viewed earlier) is another file, and its old statistics must not show."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class FileIdentity:
    path: str
    size: int
    mtime_ns: int
    inode: int

    @classmethod
    def of(cls, path: str) -> FileIdentity:
        try:
            st = os.stat(path)
        except OSError:  # gone: an identity that matches nothing cached
            return cls(path, -1, -1, -1)
        return cls(path, st.st_size, st.st_mtime_ns, st.st_ino)


class ResultCache:
    """Results keyed by ``(FileIdentity, tensor name)``, oldest dropped past ``limit``."""

    def __init__(self, limit: int = 512) -> None:
        self.limit = limit
        self._items: dict[tuple[FileIdentity, str], object] = {}

    def get(self, key: tuple[FileIdentity, str]) -> object | None:
        return self._items.get(key)

    def put(self, key: tuple[FileIdentity, str], value: object) -> None:
        self._items.pop(key, None)
        self._items[key] = value
        while len(self._items) > self.limit:
            self._items.pop(next(iter(self._items)))

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
