"""Write safetensors files so that nothing is ever lost: a crash or cancel leaves the old file.

Each output is streamed into ``.<final-name>.<random>.partial`` (in the target's folder, or in
the output root for a sharded save), held with an exclusive ``flock`` while written, ``fsync``-ed,
then renamed over the destination with ``os.replace``, and the folder is ``fsync``-ed so the
rename itself survives a power cut. Several files (shards, their index, a report) are committed
together through :mod:`.commit_journal`: all temps complete first, then a journal, then the
renames, the index last; an interrupted commit is finished by the next save or open.

New files take the permission bits of the file they replace, or else of their source file,
never wider than the process's umask allows: a 0600 checkpoint does not become a 0644 copy.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ..dtypes import DType
from ..errors import CheckpointError, os_error_reason
from ..formats.safetensors import encode_header
from ..layout import TensorEntry
from ..platform import file_io, links, mapping, names
from ..thread_start import signals_held
from .journal import PARTIAL_SUFFIX, Transaction, is_partial_name, recover_folder
from .pending_file import PendingFile, SafetensorsFile, TensorFile, file_kind
from .tensor_layout import FileLayout

__all__ = [
    "AtomicWriter",
    "PendingFile",
    "SafetensorsFile",
    "TensorEntry",
    "TensorFile",
    "clean_leftovers",
    "encode_header",
    "is_partial_name",
    "save_arrays",
    "write_text_atomic",
]


def clean_leftovers(folder: str) -> list[str]:
    """Finish interrupted commits in ``folder`` and delete dead saves' temps; return the deleted."""
    return recover_folder(folder)


def _file_id(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class AtomicWriter:
    """A set of output files that appear together on :meth:`commit`, or not at all.

    Use as a context manager: leaving it by an exception (``GeneratorExit`` of a cancelled job
    included) or without a commit removes every temp file and leaves destinations untouched.
    ``protect`` lists input files an output must never replace. With ``root`` (a sharded save's
    output folder) the temps of every file under it live in it, so one journal covers them all.
    """

    def __init__(self, protect: Iterable[str] = (), root: str | None = None) -> None:
        self.protect = [os.fspath(p) for p in protect]
        self._protect_real = {os.path.realpath(p) for p in self.protect}
        self._protect_ids = {i for i in map(_file_id, self.protect) if i is not None}
        self.root = os.path.abspath(root) if root is not None else None
        self.pending: list[PendingFile] = []
        self.created_dirs: list[str] = []
        self._reserved: dict[str, str] = {}  # abspath -> what it is ("output", "report")
        self._cleaned: set[str] = set()
        self._txns: dict[str, Transaction] = {}
        self.committed = False

    def __enter__(self) -> AtomicWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.committed:
            self.abort()

    # -- targets ------------------------------------------------------------------------------
    def make_folder(self, folder: str) -> None:
        """Create an output folder (and missing parents below an existing one); gone on abort."""
        folder = os.path.abspath(folder)
        if os.path.isdir(folder):
            return
        missing = []
        probe = folder
        while not os.path.isdir(probe):
            if os.path.lexists(probe):
                raise CheckpointError(probe, "is a file; a folder is needed here")
            # only a sharded save's own tree is created more than one level deep
            inside = self.root is not None and (probe + os.sep).startswith(self.root + os.sep)
            if missing and not inside:
                raise CheckpointError(folder, f"folder {probe} does not exist")
            missing.append(probe)
            parent = os.path.dirname(probe)
            if parent == probe:
                break
            probe = parent
        for d in reversed(missing):
            try:
                os.mkdir(file_io.native(d))
            except OSError as e:
                raise CheckpointError(d, f"cannot create folder: {os_error_reason(e)}") from None
            self.created_dirs.append(d)

    def _tmp_folder(self, path: str) -> str:
        folder = os.path.dirname(path)
        if self.root is not None and (path + os.sep).startswith(self.root + os.sep):
            return self.root
        return folder

    def reserve(self, path: str, what: str = "output") -> None:
        """Check ``path`` can be an output of this save, before any work is done.

        Refused: a missing folder, a folder, a device/FIFO/socket (replacing ``/dev/null`` with a
        file would break the system), an input of the save, or a path already taken by another
        output of this save.
        """
        if not path:
            raise CheckpointError(None, f"the {what} path is empty")
        if path.endswith((os.sep, "/")) and not os.path.isdir(path):  # a folder that is not there
            raise CheckpointError(
                path, "no such folder: create it first, or give a file name without the '/'"
            )
        problem = names.output_name_problem(path)
        if problem is not None:  # Windows: before the first byte, not half-way through shards
            raise CheckpointError(path, problem)
        apath = os.path.abspath(path)
        if apath in self._reserved:
            other = self._reserved[apath]
            raise CheckpointError(
                path,
                "is written twice in one save"
                if other == what
                else f"is both the {other} and the {what}; give them different names",
            )
        folder = os.path.dirname(apath)
        if not os.path.isdir(folder):
            raise CheckpointError(path, f"folder {folder} does not exist")
        if not os.access(folder, os.W_OK):
            raise CheckpointError(
                path,
                f"cannot write to folder {folder}: "
                + (
                    "the disk is read-only"
                    if file_io.read_only_file_system(folder)
                    else "permission denied"
                ),
            )
        try:
            st = os.stat(apath)
        except OSError:
            st = None
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                raise CheckpointError(path, "is a folder; give a file name to write")
            if not stat.S_ISREG(st.st_mode):
                raise CheckpointError(
                    path,
                    f"is {file_kind(st.st_mode)}; the {what} is written as a new regular file, "
                    "so give a file path",
                )
        if os.path.realpath(apath) in self._protect_real or (
            st is not None and (st.st_dev, st.st_ino) in self._protect_ids
        ):
            raise CheckpointError(
                path,
                "is the input file; choose another output (the input is read while writing)"
                if what == "output"
                else f"is an input file of this save; the {what} must not replace it",
            )
        self._reserved[apath] = what
        tmp_folder = self._tmp_folder(apath)
        if tmp_folder not in self._cleaned:
            recover_folder(tmp_folder)
            self._cleaned.add(tmp_folder)

    def _mode_for(self, path: str, like: str | None) -> int | None:
        """Permission bits for a new output: the replaced file's, else ``like``'s (its source)."""
        for p in (path, like):
            if p is None:
                continue
            try:
                st = os.stat(p)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                return stat.S_IMODE(st.st_mode) & 0o777
        return None

    def _start(self, path: str, like: str | None) -> tuple[str, int | None]:
        apath = os.path.abspath(path)
        if apath not in self._reserved:
            self.reserve(path)
        tmp_folder = self._tmp_folder(apath)
        if tmp_folder not in self._txns:
            try:
                self._txns[tmp_folder] = Transaction(tmp_folder)
            except OSError as e:
                raise CheckpointError(
                    path, f"cannot write to folder {tmp_folder}: {os_error_reason(e)}"
                ) from None
        return tmp_folder, self._mode_for(apath, like)

    def open(self, path: str, like: str | None = None) -> PendingFile:
        tmp_folder, mode = self._start(path, like)
        f = PendingFile(path, tmp_folder, mode)
        self.pending.append(f)
        return f

    def open_safetensors(
        self,
        path: str,
        entries: Sequence[TensorEntry],
        metadata: Mapping[str, str] | None,
        like: str | None = None,
    ) -> SafetensorsFile:
        tmp_folder, mode = self._start(path, like)
        f = SafetensorsFile(path, entries, metadata, tmp_folder, mode)
        self.pending.append(f)
        return f

    def open_tensor_file(
        self, path: str, layout: FileLayout, like: str | None = None
    ) -> TensorFile:
        """An output laid out by ``layout`` (:mod:`.tensor_layout`: safetensors or Burnpack)."""
        tmp_folder, mode = self._start(path, like)
        f = TensorFile(path, layout, tmp_folder, mode)
        self.pending.append(f)
        return f

    def write_text(self, path: str, text: str, like: str | None = None) -> None:
        f = self.open(path, like)
        f.write(text.encode("utf-8"))
        f.finish()

    # -- commit -------------------------------------------------------------------------------
    def commit(self) -> None:
        """Finish every file (fsync), journal the renames per folder, rename in the order opened
        (the index last), fsync the folders; a crash in between is rolled forward later.

        From the first rename on, a Ctrl-C (or SIGTERM/SIGHUP) waits until the commit is done
        and is raised after it: one landing between two renames rolled a finished cast back.
        """
        try:
            for f in self.pending:  # the long part (fsync), still interruptible: nothing is out
                if not f.done:
                    f.finish()
            still_mapped = mapping.release_maps_of([f.path for f in self.pending])  # Windows
            if still_mapped:
                raise CheckpointError(
                    still_mapped[0],
                    "is open in this program (one of its tensors is in use), and this system "
                    "does not let an open file be replaced; close it, then save again",
                )
            by_folder: dict[str, list[PendingFile]] = {}
            for f in self.pending:
                by_folder.setdefault(f.folder, []).append(f)
            with signals_held():
                for folder, files in by_folder.items():
                    self._commit_folder(folder, files)
                for d in self.created_dirs:
                    file_io.sync_folder(os.path.dirname(d))
                self._close_txns()
                self.committed = True
        except BaseException:
            if not self.committed:  # a signal held above is raised once committed
                self.abort()
            raise

    def _commit_folder(self, folder: str, files: list[PendingFile]) -> None:
        txn = self._txns.get(folder)
        backups: dict[str, str | None] = {}
        published: list[PendingFile] = []
        try:
            if txn is not None and len(files) > 1:
                backups = _link_backups(folder, [f.path for f in files])
                try:
                    txn.write_journal(
                        [
                            (os.path.relpath(f.tmp_path, folder), os.path.relpath(f.path, folder))
                            for f in files
                        ],
                        [os.path.basename(b) for b in backups.values() if b],
                    )
                except OSError as e:
                    raise CheckpointError(folder, f"cannot write: {os_error_reason(e)}") from None
            for f in files:
                f.publish()
                published.append(f)
        except BaseException:
            _roll_back(published, backups)  # the old set comes back, or the journal finishes it
            raise
        for d in {os.path.dirname(os.path.abspath(f.path)) for f in files} | {folder}:
            file_io.sync_folder(d)
        if txn is not None:
            txn.close()
        for b in backups.values():
            if b:
                with contextlib.suppress(OSError):
                    os.unlink(b)

    def abort(self) -> None:
        """Remove every temp file and folder this writer made. A Ctrl-C meanwhile (a user
        pressing it again after the one that stopped the write) is raised once all are gone."""
        with signals_held():
            for f in self.pending:
                f.discard()
            self.pending.clear()
            self._close_txns()
            for d in reversed(self.created_dirs):
                with contextlib.suppress(OSError):
                    os.rmdir(d)  # only if empty: a folder we made holds nothing of anyone else
            self.created_dirs.clear()

    def _close_txns(self) -> None:
        for txn in self._txns.values():
            txn.close()
        self._txns.clear()


def _link_backups(folder: str, paths: list[str]) -> dict[str, str | None]:
    """Hard links to the files a commit will replace, so a failed rename can put them back.

    Named like temps: if the process dies they are leftovers the next cleanup deletes. A file
    no backup could be made of (a full disk) is not deleted by a roll-back: its new content stays.
    """
    backups: dict[str, str | None] = {}
    for path in paths:
        if not os.path.exists(path):
            continue
        b = os.path.join(
            folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}{PARTIAL_SUFFIX}"
        )
        backups[path] = b if links.keep_backup(path, b) else None  # a link, else a copy
    return backups


def _roll_back(published: list[PendingFile], backups: dict[str, str | None]) -> None:
    """Undo the renames done so far: each replaced file comes back, each new one goes (a
    replaced file nothing could back up keeps its new content rather than none)."""
    for f in reversed(published):
        with contextlib.suppress(OSError):
            if f.path not in backups:
                os.unlink(f.path)
            elif (b := backups.pop(f.path)) is not None:
                file_io.replace(b, f.path)
    for b in backups.values():
        if b:
            with contextlib.suppress(OSError):
                os.unlink(b)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Replace ``path`` with ``text`` durably (reports, indexes): old content or new, never half."""
    with AtomicWriter() as w:
        w.write_text(os.fspath(path), text)
        w.commit()


def save_arrays(
    path: str | os.PathLike[str],
    tensors: Sequence[tuple[str, DType, np.ndarray]],
    metadata: Mapping[str, str] | None = None,
) -> None:
    """Write small arrays as one safetensors file, atomically (tests, fixtures, tools)."""
    if any(d.is_packed for _, d, _ in tensors):
        raise ValueError("save_arrays does not pack sub-byte dtypes")
    entries = [TensorEntry(n, d, tuple(a.shape)) for n, d, a in tensors]
    with AtomicWriter() as w:
        f = w.open_safetensors(os.fspath(path), entries, metadata)
        for _, d, a in tensors:
            f.write(np.ascontiguousarray(a, dtype=d.numpy))
        w.commit()
