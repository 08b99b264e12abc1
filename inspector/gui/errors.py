"""One human line for any exception a background job hands back to the window."""

from __future__ import annotations

from inspector.core.errors import CheckpointError


def error_text(path: str | None, e: BaseException) -> str:
    if isinstance(e, CheckpointError):
        return str(e)
    if isinstance(e, OSError):
        where = e.filename or path
        return f"{where}: {e.strerror or e}" if where else str(e.strerror or e)
    what = str(e) or type(e).__name__
    return f"{path}: {what}" if path else what
