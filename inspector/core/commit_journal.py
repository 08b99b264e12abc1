"""Several output files that appear together, even across a SIGKILL: a journal per save and folder.

A save holds ``.<12 hex>.txn`` in every folder where it keeps temps, ``flock``-ed for as long as it
runs: that lock says "a live save owns the temps here", so nobody's cleanup takes them. On
commit, every temp is complete and fsynced first; then the save writes into its ``.txn`` the list
of renames it is about to make (``{"renames": [[temp, final], ...]}``), fsyncs it, renames, and
deletes the journal. The rule on the next save into that folder, or the next open of it:

* a ``.txn`` nobody holds with a complete journal is a commit that was interrupted after every
  byte reached the disk: its remaining renames are done (rolled forward), then it is deleted;
* a ``.txn`` nobody holds without a complete journal is a save that died before committing: it
  and every unheld temp are deleted, so the folder keeps the complete old set.

A journal can only rename ``.<name>.<12 hex>.partial`` in its own folder to ``<name>`` in that
folder or one under it: a journal planted in a downloaded folder cannot move anything else.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets

from .errors import CheckpointError

try:
    import fcntl
except ImportError:  # Windows: no flock, so liveness cannot be told; nothing is ever cleaned
    fcntl = None  # type: ignore[assignment]

PARTIAL_SUFFIX = ".partial"
TXN_SUFFIX = ".txn"
# only names this writer makes: ".<final-name>.<12 hex digits>.partial" and ".<12 hex>.txn"
_PARTIAL_NAME = re.compile(r"\.(.+)\.[0-9a-f]{12}" + re.escape(PARTIAL_SUFFIX))
_TXN_NAME = re.compile(r"\.[0-9a-f]{12}" + re.escape(TXN_SUFFIX))
_MAX_JOURNAL_BYTES = 64 << 20


def is_partial_name(name: str) -> bool:
    """A temp this writer made (never some other tool's ``.foo.partial``)."""
    return _PARTIAL_NAME.fullmatch(name) is not None


def fsync_dir(folder: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class Transaction:
    """The locked ``.txn`` of one save in one folder; becomes the journal at commit time."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        for _ in range(8):
            path = os.path.join(folder, f".{secrets.token_hex(6)}{TXN_SUFFIX}")
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            except FileExistsError:
                continue
            break
        else:
            raise CheckpointError(folder, "could not create a lock file in the folder")
        if fcntl is not None:
            with contextlib.suppress(OSError):  # a filesystem without locks: saved unlocked
                fcntl.flock(fd, fcntl.LOCK_EX)
        self.path, self.fd = path, fd

    def write_journal(self, renames: list[tuple[str, str]], backups: list[str] = ()) -> None:
        """Record ``(temp, final)`` paths (relative to the folder), durably, before any rename;
        ``backups`` are links to the replaced files, deleted once the commit is done."""
        doc = {"renames": [list(r) for r in renames], "backups": list(backups)}
        text = json.dumps(doc).encode("utf-8")
        os.ftruncate(self.fd, 0)
        os.lseek(self.fd, 0, os.SEEK_SET)
        view = memoryview(text)
        while view:
            view = view[os.write(self.fd, view) :]
        os.fsync(self.fd)
        fsync_dir(self.folder)

    def close(self) -> None:
        """Delete the journal (all renames done, or the save given up) and drop the lock."""
        if self.fd < 0:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        fsync_dir(self.folder)
        os.close(self.fd)
        self.fd = -1


def _journal_renames(folder: str, text: bytes) -> list[tuple[str | None, str]] | None:
    """The renames a complete journal asks for, each checked to be one of ours, then its backups
    to delete as ``(None, path)``; None if the journal is incomplete."""
    try:
        data = json.loads(text.decode("utf-8"))
        pairs = data["renames"]
        out = []
        for tmp, final in pairs:
            if not isinstance(tmp, str) or not isinstance(final, str):
                return None
            out.append((tmp, final))
    except (ValueError, KeyError, TypeError):
        return None
    safe = []
    for tmp, final in out:
        if "/" in tmp or os.sep in tmp:  # our temps sit in the journal's own folder
            continue
        parts = [tmp, *final.split("/")]
        if os.path.isabs(final) or ".." in parts or "" in parts:
            continue
        m = _PARTIAL_NAME.fullmatch(os.path.basename(tmp))
        if m is None or m.group(1) != os.path.basename(final):
            continue
        safe.append((os.path.join(folder, tmp), os.path.join(folder, final)))
    for b in data.get("backups", ()):  # data is a dict: data["renames"] was found
        if isinstance(b, str) and "/" not in b and os.sep not in b and is_partial_name(b):
            safe.append((None, os.path.join(folder, b)))
    return safe


def _settle_transaction(folder: str, name: str) -> bool:
    """Roll forward or drop one ``.txn``; False when a live save holds it."""
    path = os.path.join(folder, name)
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return True
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        if os.stat(path, follow_symlinks=False).st_ino != os.fstat(fd).st_ino:
            return True  # settled by someone else in the meantime
        text = os.read(fd, _MAX_JOURNAL_BYTES)
        renames = _journal_renames(folder, text) if text else None
        for tmp, final in renames or ():
            if tmp is None:  # a backup of a replaced file: not needed once rolled forward
                with contextlib.suppress(OSError):
                    os.unlink(final)
                continue
            try:
                os.replace(tmp, final)
            except FileNotFoundError:
                continue  # renamed before the interruption
            except OSError as e:
                raise CheckpointError(
                    final,
                    "an interrupted save left this folder half written and it cannot be completed: "
                    f"{e.strerror or e}",
                ) from None
        os.unlink(path)
        fsync_dir(folder)
        return True
    finally:
        os.close(fd)


def recover_folder(folder: str, remove_leftovers: bool = True) -> list[str]:
    """Finish interrupted commits and delete dead saves' temps in ``folder``; return what went.

    Safe to call at any time: a live save (its ``.txn`` or temp locked) is never touched.
    Opening a checkpoint only finishes commits (``remove_leftovers=False``); a save also cleans.
    """
    removed: list[str] = []
    if fcntl is None:
        return removed  # without locks a leftover cannot be told from a live save
    try:
        partials = [n for n in os.listdir(folder) if is_partial_name(n)] if remove_leftovers else []
        # listed after the temps: a save creates its .txn before its first temp
        txns = [n for n in os.listdir(folder) if _TXN_NAME.fullmatch(n)]
    except OSError:
        return removed
    live = False
    for name in txns:
        try:
            live = not _settle_transaction(folder, name) or live
        except OSError as e:
            if e.errno not in (errno.ENOENT, errno.EACCES, errno.EPERM, errno.EROFS):
                raise
    if live or not remove_leftovers:
        return removed  # another save is running here: its temps are not leftovers
    for name in partials:
        path = os.path.join(folder, name)
        if _remove_unheld(path):
            removed.append(path)
    return removed


def _remove_unheld(path: str) -> bool:
    try:
        # O_NONBLOCK: a FIFO of that name must not hang the save
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a save in progress holds it
        with contextlib.suppress(OSError):
            if os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                os.unlink(path)
                return True
        return False
    finally:
        os.close(fd)
