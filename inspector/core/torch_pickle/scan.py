"""``scan``: every global each pickle imports, with its verdict, without running any of them.

Unlike loading, a scan does not stop at the first refused import: it reads the whole pickle,
calling nothing, so a person sees all of what the file would have run.
"""

from __future__ import annotations

import enum
import mmap
import os
import stat
import zipfile
from dataclasses import dataclass, field

from ..errors import CheckpointError, path_problem
from ..header import read_header
from ..header.reader import _open_regular
from .allowlist import ImportVerdict
from .archive import LEGACY_MAGIC, is_tar, read_zip
from .machine import PickleError, PickleMachine
from .policies import ImportSeen, ScanPolicy
from .reader import looks_like_pickle

_LEGACY_PICKLES = 5  # magic, protocol, system info, the object, the storage keys


class ScanStatus(enum.Enum):
    CLEAN = "clean"  # only tensor rebuilds and plain containers (or no pickle at all)
    REFUSED = "refused"  # imports something else
    UNREADABLE = "unreadable"


@dataclass
class FileScan:
    path: str
    format: str  # "safetensors", "torch zip", "torch legacy", "pickle"
    imports: list[ImportSeen] = field(default_factory=list)
    error: str | None = None

    @property
    def status(self) -> ScanStatus:
        if any(i.verdict is ImportVerdict.REFUSED for i in self.imports):
            return ScanStatus.REFUSED
        return ScanStatus.UNREADABLE if self.error else ScanStatus.CLEAN


@dataclass
class ScanReport:
    files: list[FileScan]
    root: str | None = None  # the folder walked, when a folder was scanned

    @property
    def status(self) -> ScanStatus:
        statuses = {f.status for f in self.files}
        for s in (ScanStatus.REFUSED, ScanStatus.UNREADABLE):
            if s in statuses:
                return s
        return ScanStatus.CLEAN


# a walk reads headers and pickles only, but a folder of millions of files is no model folder
MAX_FOLDER_FILES = 100_000
# what a folder walk found that torch would never load as a checkpoint: listed, judged clean
NOT_CHECKPOINTS = ("not a checkpoint", "special file", "broken symlink", "symlink to a folder")


def scan_path(path: str | os.PathLike[str]) -> ScanReport:
    """Scan one file, or every file under a folder (or an index's folder), whatever its name.

    transformers and diffusers pick files by name (``unet/diffusion_pytorch_model.bin``) and
    torch loads whatever path it is given, so a folder is walked recursively, hidden files and
    subfolders included. Symlinks to files are read through (a hub cache is made of them); a
    symlink to a folder outside the walk is reported, not followed.
    """
    path = os.fspath(path)
    try:
        st = os.stat(path)
    except OSError as e:
        raise CheckpointError(path, path_problem(path, e)) from None
    if not (stat.S_ISDIR(st.st_mode) or path.endswith(".json")):
        return ScanReport([scan_file(path)])
    folder = path if stat.S_ISDIR(st.st_mode) else os.path.dirname(os.path.abspath(path))
    files = _scan_folder(folder)
    if all(f.format in NOT_CHECKPOINTS and f.status is ScanStatus.CLEAN for f in files):
        raise CheckpointError(path, "holds no checkpoint file to scan")
    return ScanReport(files, root=folder)


def _scan_folder(root: str) -> list[FileScan]:
    real_root = os.path.realpath(root)
    out: list[FileScan] = []
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            out.append(FileScan(folder, "folder", error=f"cannot list: {path_problem(folder, e)}"))
            continue
        subfolders = []
        for entry in entries:
            if len(out) >= MAX_FOLDER_FILES:
                out.append(
                    FileScan(
                        root,
                        "folder",
                        error=f"holds over {MAX_FOLDER_FILES:,} files; the rest was not scanned",
                    )
                )
                return out
            try:
                if entry.is_symlink():
                    out.append(_scan_link(entry.path, real_root))
                elif entry.is_dir(follow_symlinks=False):
                    subfolders.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    out.append(scan_file(entry.path, in_folder=True))
                else:  # a FIFO would block an open; a device is no file anyone downloaded
                    out.append(FileScan(entry.path, "special file"))
            except OSError as e:
                out.append(FileScan(entry.path, "unknown", error=path_problem(entry.path, e)))
        pending.extend(reversed(subfolders))  # depth first, in name order
    return out


def _scan_link(path: str, real_root: str) -> FileScan:
    target = os.path.realpath(path)
    if not os.path.exists(target):
        return FileScan(path, "broken symlink")
    if os.path.isdir(target):
        if os.path.commonpath([real_root, target]) == real_root:
            return FileScan(path, "symlink to a folder")  # scanned where it is
        return FileScan(
            path,
            "symlink to a folder",
            error=f"links to {target}, outside the scanned folder: not followed; scan it too",
        )
    if not os.path.isfile(target):
        return FileScan(path, "special file")
    return scan_file(path, in_folder=True)


def scan_file(path: str, in_folder: bool = False) -> FileScan:
    """What ``torch.load(path)`` would import, judged as torch parses the file: a zip, a tar, or
    else a stream of pickles from byte 0 (whatever the file's name or first bytes). In a
    folder walk, a file of no known format that imports nothing is "not a checkpoint"."""
    try:
        with _open_regular(path) as f:
            head = f.read(512)
            if head.startswith(b"PK\x03\x04"):
                return _scan_zip(path, f)
    except CheckpointError as e:
        return FileScan(path, "unknown", error=e.reason)
    if is_tar(head):
        return FileScan(path, "torch tar", error="tar-format checkpoint (torch < 0.4): not read")
    if not looks_like_pickle(path, head):
        try:
            read_header(path)
        except CheckpointError as e:
            return _scan_unknown(path, e.reason, in_folder)
        return FileScan(path, "safetensors")  # data only: nothing to import
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return _scan_stream(path, mm)
    except (OSError, ValueError) as e:
        return FileScan(path, "pickle", error=f"cannot read: {e}")


def _scan_unknown(path: str, reason: str, in_folder: bool) -> FileScan:
    """Neither safetensors nor a pickle by its first bytes: torch.load would still unpickle it
    from byte 0, so whatever it imports before the bytes stop making sense is reported."""
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                found = FileScan(path, "unknown", error="file is empty")
            else:
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                    found = _scan_stream(path, mm)
    except (OSError, ValueError) as e:
        return FileScan(path, "unknown", error=f"cannot read: {e}")
    if found.imports:
        return found
    if in_folder:
        return FileScan(path, "not a checkpoint")
    return FileScan(path, "unknown", error=reason)


def _scan_zip(path: str, fh: object) -> FileScan:
    scan = ScanPolicy()
    try:
        layout = read_zip(path, fh)
    except CheckpointError as e:
        if "TorchScript" not in e.reason:
            return FileScan(path, "torch zip", error=e.reason)
        return _scan_members(path, fh, "TorchScript")
    error = None
    for data in [layout.pickle, *layout.other_pickles.values()]:
        try:
            PickleMachine(data, scan).run(0)
        except PickleError as e:
            error = f"pickle {e}"
    return FileScan(path, "torch zip", list(scan.seen.values()), error)


def _scan_members(path: str, fh: object, fmt: str) -> FileScan:
    """Every ``*.pkl`` of an archive read_zip refuses (TorchScript): still worth listing."""
    scan = ScanPolicy()
    error = None
    try:
        with zipfile.ZipFile(fh) as zf:  # type: ignore[arg-type]
            for info in zf.infolist():
                if info.filename.endswith(".pkl") and info.file_size < 1 << 30:
                    try:
                        PickleMachine(zf.read(info), scan).run(0)
                    except PickleError as e:
                        error = f"{info.filename}: pickle {e}"
    except Exception as e:  # zipfile raises assorted types on crafted archives
        error = f"damaged zip archive ({e})"
    return FileScan(path, fmt, list(scan.seen.values()), error)


def _scan_stream(path: str, mm: mmap.mmap) -> FileScan:
    """Pickles one after another: a legacy checkpoint's five, or a raw pickle's one (or more)."""
    scan = ScanPolicy()
    fmt, pos, count, error = "pickle", 0, 0, None
    while pos < len(mm):
        try:
            obj, pos = PickleMachine(mm, scan).run(pos)
        except PickleError as e:
            error = f"pickle {e}"
            break
        count += 1
        if count == 1 and obj == LEGACY_MAGIC and type(obj) is int:
            fmt = "torch legacy"
        if fmt == "torch legacy" and count == _LEGACY_PICKLES:
            break  # storage bytes follow
        if fmt == "pickle" and mm[pos : pos + 1] != b"\x80":
            break
    return FileScan(path, fmt, list(scan.seen.values()), error)
