"""The one error type the core raises for bad input, so callers can show one clear line."""

from __future__ import annotations

import os


class CheckpointError(Exception):
    """A problem with a user-supplied path, worded for a person, never a traceback.

    ``str(err)`` is ``"<path>: <reason>"``; the CLI prefixes ``checkpoint-inspector: error:``.
    """

    def __init__(self, path: str | os.PathLike[str] | None, reason: str) -> None:
        self.path = os.fspath(path) if path is not None else None
        self.reason = reason
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


class Cancelled(Exception):
    """Raised inside a job when the caller asked it to stop; nothing partial is left behind."""
