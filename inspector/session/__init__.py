"""The window's state without Qt: what is open, what was derived from it, and the rules that keep
it consistent. The GUI subscribes to :class:`Session` events and adapts them to views."""

from .events import Event, SessionEvents
from .file_identity import FileIdentity, ResultCache
from .keep_globs import KeepGlobs
from .preview import QuantizePreview
from .recent import MemorySettings, RecentFiles, SettingsStore
from .session import CastResult, LazyCheckpoint, Session, identities_of

__all__ = [
    "CastResult",
    "Event",
    "FileIdentity",
    "KeepGlobs",
    "LazyCheckpoint",
    "MemorySettings",
    "QuantizePreview",
    "RecentFiles",
    "ResultCache",
    "Session",
    "SessionEvents",
    "SettingsStore",
    "identities_of",
]
