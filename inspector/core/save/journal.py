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

Only a save runs this, never a read (``list``, ``scan``, opening in the window): a folder someone
downloaded may hold a planted journal, and reading a folder must not change a byte of it. A read
only *reports* a leftover journal (:func:`leftover_journals`). Even a save obeys only journals this
user's process wrote: a regular file of ours (owner, mode 0600, one link, our naming) that names
this very folder (device and inode, recorded at creation); its renames move only
``.<name>.<12 hex>.partial`` files of ours in its folder to ``<name>`` in that folder or below,
component by component without following a symlink, so a journal cannot move anything else.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import stat
from typing import NamedTuple

from ..errors import CheckpointError
from ..platform import locks
from ..platform.file_io import (
    create_new,
    remove_and_close,
    replace,
    sync_file,
    sync_folder,
    sync_folder_fd,
)
from ..thread_start import signals_held

PARTIAL_SUFFIX = ".partial"
TXN_SUFFIX = ".txn"
# only names this writer makes: ".<final-name>.<12 hex digits>.partial" and ".<12 hex>.txn"
_PARTIAL_NAME = re.compile(r"\.(.+)\.[0-9a-f]{12}" + re.escape(PARTIAL_SUFFIX))
_TXN_NAME = re.compile(r"\.[0-9a-f]{12}" + re.escape(TXN_SUFFIX))
_MAX_JOURNAL_BYTES = 64 << 20
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
# renames relative to folder descriptors: the only way to refuse a symlink at every component
# (POSIX; Windows has none, so there, as without locks, leftovers are left alone)
_DIR_FD_OK = {os.rename, os.open, os.stat, os.unlink} <= os.supports_dir_fd  # os.replace: as rename


def is_partial_name(name: str) -> bool:
    """A temp this writer made (never some other tool's ``.foo.partial``)."""
    return _PARTIAL_NAME.fullmatch(name) is not None


def leftover_journals(folder: str) -> list[str]:
    """Names of save journals in ``folder``: an interrupted (or running) save. Only listed."""
    try:
        return sorted(n for n in os.listdir(folder) if _TXN_NAME.fullmatch(n))
    except OSError:
        return []


class Transaction:
    """The locked ``.txn`` of one save in one folder; becomes the journal at commit time."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.fd = -1
        try:
            with signals_held():  # a signal between creating it and owning it would leak it
                self._create()
            st = os.stat(folder)
        except BaseException:  # the caller never gets it to close: done here
            self.close()
            raise
        self.folder_id = [st.st_dev, st.st_ino]

    def _create(self) -> None:
        for _ in range(8):
            path = os.path.join(self.folder, f".{secrets.token_hex(6)}{TXN_SUFFIX}")
            try:
                self.fd = create_new(path, os.O_RDWR, 0o600)
            except FileExistsError:
                continue
            self.path = path
            locks.hold(self.fd)  # without locks (Windows, some network mounts): unlocked
            return
        raise CheckpointError(self.folder, "could not create a lock file in the folder")

    def write_journal(self, renames: list[tuple[str, str]], backups: list[str] = ()) -> None:
        """Record ``(temp, final)`` paths (relative to the folder), durably, before any rename;
        ``backups`` are links to the replaced files, deleted once the commit is done."""
        doc = {
            "folder": self.folder_id,
            "renames": [list(r) for r in renames],
            "backups": list(backups),
        }
        text = json.dumps(doc).encode("utf-8")
        os.ftruncate(self.fd, 0)
        os.lseek(self.fd, 0, os.SEEK_SET)
        view = memoryview(text)
        while view:
            view = view[os.write(self.fd, view) :]
        sync_file(self.fd)
        sync_folder(self.folder)

    def close(self) -> None:
        """Delete the journal (all renames done, or the save given up) and drop the lock."""
        if self.fd < 0:
            return
        remove_and_close(self.path, self.fd)
        self.fd = -1
        sync_folder(self.folder)


class _ForeignJournal(Exception):
    pass


class _Step(NamedTuple):
    """One step of a journal: rename ``tmp`` (a name in the journal's folder) to ``final`` (a
    path below it); ``tmp`` None: delete the backup ``final`` (a name in the folder)."""

    tmp: str | None
    final: str


def _journal_steps(text: bytes, folder_id: tuple[int, int]) -> list[_Step] | None:
    """The steps a complete journal of this folder asks for, each checked to be one of ours;
    None if the journal is incomplete. Raises :class:`_ForeignJournal` for a complete journal
    written for another folder (copied along with it, or planted)."""
    try:
        data = json.loads(text.decode("utf-8"))
        pairs = [(tmp, final) for tmp, final in data["renames"]]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not all(isinstance(tmp, str) and isinstance(final, str) for tmp, final in pairs):
        return None
    if data.get("folder") != list(folder_id):
        raise _ForeignJournal
    steps = []
    for tmp, final in pairs:
        if "/" in tmp or os.sep in tmp:  # our temps sit in the journal's own folder
            continue
        parts = final.split("/")
        if os.path.isabs(final) or "\\" in final or {"..", ".", ""} & set(parts):
            continue
        m = _PARTIAL_NAME.fullmatch(tmp)
        if m is None or m.group(1) != parts[-1]:
            continue
        steps.append(_Step(tmp, final))
    for b in data.get("backups", ()):
        if isinstance(b, str) and "/" not in b and os.sep not in b and is_partial_name(b):
            steps.append(_Step(None, b))
    return steps


def _ours(st: os.stat_result) -> bool:
    """A regular file this user made private, as our writer makes journals and temps."""
    return (
        stat.S_ISREG(st.st_mode)
        and st.st_uid == os.geteuid()
        and st.st_mode & 0o077 == 0
        and st.st_nlink == 1
    )


def _open_below(dir_fd: int, parts: list[str]) -> int:
    """A descriptor of the folder ``parts`` below ``dir_fd``, refusing any symlink on the way."""
    fd = os.dup(dir_fd)
    try:
        for part in parts:
            nxt = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _apply(dir_fd: int, step: _Step) -> None:
    """One rename (or backup deletion) of a journal, done relative to the folder's descriptor."""
    if step.tmp is None:
        with contextlib.suppress(OSError):
            st = os.stat(step.final, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid():
                os.unlink(step.final, dir_fd=dir_fd)
        return
    try:
        st = os.stat(step.tmp, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return  # renamed before the interruption
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        return  # not a temp of ours: never moved
    *subdirs, name = step.final.split("/")
    try:
        dst_fd = _open_below(dir_fd, subdirs)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            return  # a symlink on the way: the name leaves the folder, so it is refused
        raise
    try:
        replace(step.tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dst_fd)
    finally:
        os.close(dst_fd)


def _settle_transaction(folder: str, dir_fd: int, name: str) -> bool:
    """Roll forward or drop one ``.txn``; False when a live save holds it. A journal that is
    not ours (owner, mode, links, folder) is left alone: it is none of this save's business."""
    try:
        fd = os.open(name, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return True
    try:
        if not locks.try_take(fd):
            return False
        st = os.fstat(fd)
        if os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_ino != st.st_ino:
            return True  # settled by someone else in the meantime
        if not _ours(st):
            return True
        dir_st = os.fstat(dir_fd)
        text = os.read(fd, _MAX_JOURNAL_BYTES)
        try:
            steps = _journal_steps(text, (dir_st.st_dev, dir_st.st_ino)) if text else None
        except _ForeignJournal:
            return True  # not ours to settle
        for step in steps or ():  # None: a save that died before committing
            try:
                _apply(dir_fd, step)
            except OSError as e:
                raise CheckpointError(
                    os.path.join(folder, step.final),
                    "an interrupted save left this folder half written and it cannot be completed: "
                    f"{e.strerror or e}",
                ) from None
        os.unlink(name, dir_fd=dir_fd)
        sync_folder_fd(dir_fd)
        return True
    finally:
        os.close(fd)


def recover_folder(folder: str, remove_leftovers: bool = True) -> list[str]:
    """Finish interrupted commits in ``folder`` and delete dead saves' temps; return what went.

    Called by a save into ``folder`` only (a read reports, see :func:`leftover_journals`).
    Safe at any time: a live save (its ``.txn`` or temp locked) is never touched.
    """
    removed: list[str] = []
    if not locks.can_tell_liveness() or not _DIR_FD_OK:
        return removed  # without locks a leftover cannot be told from a live save
    try:
        dir_fd = os.open(folder, _DIR_FLAGS)
    except OSError:
        return removed
    try:
        try:
            names = os.listdir(dir_fd)
        except OSError:
            return removed
        partials = [n for n in names if is_partial_name(n)] if remove_leftovers else []
        # listed after the temps: a save creates its .txn before its first temp
        txns = [n for n in os.listdir(dir_fd) if _TXN_NAME.fullmatch(n)]
        live = False
        for name in txns:
            try:
                live = not _settle_transaction(folder, dir_fd, name) or live
            except OSError as e:
                if e.errno not in (errno.ENOENT, errno.EACCES, errno.EPERM, errno.EROFS):
                    raise
        if live or not remove_leftovers:
            return removed  # another save is running here: its temps are not leftovers
        for name in partials:
            if _remove_unheld(dir_fd, name):
                removed.append(os.path.join(folder, name))
        return removed
    finally:
        os.close(dir_fd)


def _remove_unheld(dir_fd: int, name: str) -> bool:
    """Delete a dead save's temp of ours (nobody holds its lock); never someone else's file."""
    try:
        # O_NONBLOCK: a FIFO of that name must not hang the save
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return False
    try:
        if not locks.try_take(fd):
            return False  # a save in progress holds it
        with contextlib.suppress(OSError):
            st = os.fstat(fd)
            if st.st_uid != os.geteuid() or not stat.S_ISREG(st.st_mode):
                return False
            if os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_ino == st.st_ino:
                os.unlink(name, dir_fd=dir_fd)
                return True
        return False
    finally:
        os.close(fd)
