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

    @property
    def status(self) -> ScanStatus:
        statuses = {f.status for f in self.files}
        for s in (ScanStatus.REFUSED, ScanStatus.UNREADABLE):
            if s in statuses:
                return s
        return ScanStatus.CLEAN


def scan_path(path: str | os.PathLike[str]) -> ScanReport:
    """Scan one file, or every checkpoint file in a folder (or an index's folder)."""
    path = os.fspath(path)
    try:
        st = os.stat(path)
    except OSError as e:
        raise CheckpointError(path, path_problem(path, e)) from None
    if stat.S_ISDIR(st.st_mode) or path.endswith(".json"):
        folder = path if stat.S_ISDIR(st.st_mode) else os.path.dirname(os.path.abspath(path))
        names = sorted(n for n in os.listdir(folder) if not n.startswith("."))
        files = [
            os.path.join(folder, n)
            for n in names
            if n.endswith((".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".pkl"))
            and os.path.isfile(os.path.join(folder, n))
        ]
        if not files:
            raise CheckpointError(path, "holds no checkpoint file to scan")
        return ScanReport([scan_file(f) for f in files])
    return ScanReport([scan_file(path)])


def scan_file(path: str) -> FileScan:
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
            return FileScan(path, "unknown", error=e.reason)
        return FileScan(path, "safetensors")  # data only: nothing to import
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return _scan_stream(path, mm)
    except (OSError, ValueError) as e:
        return FileScan(path, "pickle", error=f"cannot read: {e}")


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
