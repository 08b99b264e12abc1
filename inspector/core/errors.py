"""The one error type the core raises for bad input, so callers can show one clear line."""

from __future__ import annotations

import errno
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

    def __reduce__(self) -> tuple[type[CheckpointError], tuple[str | None, str]]:
        """Pickled as its two parts: a cast worker process raises it for the caller."""
        return (type(self), (self.path, self.reason))


class Cancelled(Exception):
    """Raised inside a job when the caller asked it to stop; nothing partial is left behind."""


class AmbiguousCheckpointError(CheckpointError):
    """A folder holds several checkpoints (index variants, unjoined files): the person picks one.

    ``choices`` are the paths that could be opened instead; the window offers them in a list.
    """

    def __init__(self, path: str, reason: str, choices: list[str]) -> None:
        super().__init__(path, reason)
        self.choices = choices


class RefusedPickleError(CheckpointError):
    """A pickle imports globals that are not part of a tensor checkpoint; nothing was executed.

    ``imports`` names them (``os.system``), so the window can list them.
    """

    def __init__(self, path: str, imports: list[str]) -> None:
        self.imports = imports or ["a global outside the allowlist"]
        shown = self.imports[:5]
        names = ", ".join(shown[:-1]) + (" and " if len(shown) > 1 else "") + shown[-1]
        if len(self.imports) > 5:
            names = ", ".join(shown) + f" and {len(self.imports) - 5} more"
        verb = "is" if len(self.imports) == 1 else "are"
        super().__init__(
            path,
            f"pickle imports {names}, which {verb} not part of a tensor checkpoint; "
            "nothing was executed (see: checkpoint-inspector scan)",
        )


def path_problem(path: str, e: OSError) -> str:
    """Why ``path`` cannot be used, in words: not the C library's "No such device or address"."""
    import stat

    if e.errno == errno.ELOOP:
        return "is a symbolic link loop"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if e.errno == errno.ENOENT:
        if os.path.lexists(path):
            return "is a broken symbolic link (its target does not exist)"
        return "no such file or folder"
    if e.errno == errno.ENOTDIR:
        return "no such file or folder (a part of the path is a file)"
    if e.errno == errno.ENAMETOOLONG:
        return "the path is too long"
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = 0
    if stat.S_ISSOCK(mode):
        return "is a socket, not a file"
    return (e.strerror or str(e)).rstrip(".")


def os_error_reason(e: OSError) -> str:
    """The reason for a failed read or write, in the words a person looks for."""
    if e.errno == errno.ENOSPC:
        return "no space left on the disk"
    if e.errno == errno.EDQUOT:
        return "disk quota exceeded"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if e.errno == errno.EROFS:
        return "the disk is read-only"
    if e.errno == errno.EFBIG:  # FAT32's 4 GiB, or a file size limit (ulimit -f)
        return "the file would be larger than this file system or a limit allows"
    return e.strerror or str(e)
