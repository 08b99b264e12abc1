"""``scan``: every global each pickle imports, with its verdict, without running any of them.

Unlike loading, a scan does not stop at the first refused import: it reads the whole pickle,
calling nothing, so a person sees all of what the file would have run.
"""

from __future__ import annotations

import enum
import mmap
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import CheckpointError, path_problem
from ..formats.burnpack import FORMAT_NAME as BURNPACK
from ..formats.burnpack import SUFFIX as BURNPACK_SUFFIX
from ..formats.burnpack import read_burnpack
from ..formats.gguf import FORMAT_NAME as GGUF
from ..formats.gguf import SUFFIX as GGUF_SUFFIX
from ..formats.gguf import read_gguf
from ..formats.safetensors import read_header
from ..formats.torch_pickle import (
    LEGACY_MAGIC,
    MAX_PICKLE_BYTES,
    OPCODES,
    PICKLE_SUFFIXES,
    AmbiguousPickle,
    ImportSeen,
    ImportVerdict,
    PickleError,
    PickleMachine,
    ScanPolicy,
    error_summary,
    fold,
    is_torch_tar,
    is_torchscript,
    looks_like_pickle,
    open_zip,
    read_member,
    tar_pickles,
    zip_problems,
)
from ..regular_file import open_regular
from ..wording import format_bytes
from .index import index_findings

_LEGACY_PICKLES = 5  # magic, protocol, system info, the object, the storage keys
_PKL_BUDGET = 256 << 20  # bytes of .pkl members one scan interprets in all (~15 s at most)


class ScanStatus(enum.Enum):
    CLEAN = "clean"  # only tensor rebuilds and plain containers (or no pickle at all)
    REFUSED = "refused"  # imports something else
    UNREADABLE = "unreadable"


@dataclass
class FileScan:
    path: str
    format: str  # "safetensors", "torch zip", "torch legacy", "pickle", "TorchScript", ...
    imports: list[ImportSeen] = field(default_factory=list)
    error: str | None = None
    # what makes the file unsafe besides its imports: torch would read it otherwise than we do,
    # or run code through another door (TorchScript, a tar's members, a pickle polyglot)
    findings: list[str] = field(default_factory=list)

    @property
    def status(self) -> ScanStatus:
        if self.findings or any(i.verdict is ImportVerdict.REFUSED for i in self.imports):
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
DATA_ONLY = ("safetensors", BURNPACK, GGUF)  # formats whose files hold no code at all
# the other data-only formats, by their first bytes, read when safetensors refuses a file
_DATA_FORMATS = {b"NRUB": (BURNPACK, read_burnpack), b"GGUF": (GGUF, read_gguf)}
_DATA_BY_SUFFIX = {BURNPACK_SUFFIX: _DATA_FORMATS[b"NRUB"], GGUF_SUFFIX: _DATA_FORMATS[b"GGUF"]}
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
                if entry.is_dir(follow_symlinks=False):
                    subfolders.append(entry.path)
                    continue
                if entry.is_symlink():
                    found = _scan_link(entry.path, real_root)
                elif entry.is_file(follow_symlinks=False):
                    found = scan_file(entry.path, in_folder=True)
                else:  # a FIFO would block an open; a device is no file anyone downloaded
                    found = FileScan(entry.path, "special file")
                is_json = entry.name.endswith(".json") and found.format == "not a checkpoint"
                if is_json and (findings := index_findings(entry.path, real_root)):
                    found = FileScan(entry.path, "index", findings=findings)
                out.append(found)
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
    """What ``torch.load(path)`` would import, judged as torch parses the file: a zip, else a
    tar (Python's tarfile, as torch tries it), else a stream of pickles from byte 0 — whatever
    the file's name, and even when the same bytes are also a valid safetensors file. In a folder
    walk, a file of no known format that imports nothing is "not a checkpoint"."""
    try:
        with open_regular(path) as f:
            head = f.read(512)
            if head.startswith(b"PK\x03\x04"):
                return _scan_zip(path, f)
            f.seek(0)
            if is_torch_tar(f):
                return _scan_tar(path, f)
    except CheckpointError as e:
        return FileScan(path, "unknown", error=e.reason)
    except OSError as e:
        return FileScan(path, "unknown", error=f"cannot read: {e}")
    stream, pickles = _stream_of(path)
    fmt = "safetensors"
    try:
        try:
            read_header(path)
        except CheckpointError:
            other = _data_reader(path, head)
            if other is None:
                raise
            fmt, read_other = other
            read_other(path)  # data only too; its own refusal if it is not valid
    except CheckpointError as e:
        if pickles or stream.imports or stream.findings or looks_like_pickle(path, head):
            return stream
        if in_folder and not _reported_when_unreadable(path, stream):
            if _torch_would_unpickle(path, head):
                return _cannot_follow(path, "unknown", stream.error)
            return FileScan(path, "not a checkpoint")
        return FileScan(path, "unknown", error=e.reason)
    if stream.imports or stream.findings:  # also a pickle: what torch.load of it would run
        names = ", ".join(i.name for i in stream.imports) or "nothing yet"
        return FileScan(
            path,
            fmt,
            stream.imports,
            findings=[
                "is also a pickle: torch.load of this file (say, named pytorch_model.bin) "
                f"would unpickle it and import {names}",
                *stream.findings,
            ],
        )
    if stream.error and not pickles and _torch_would_unpickle(path, head):
        return _cannot_follow(path, fmt, stream.error)
    return FileScan(path, fmt)  # data only: nothing to import


# names a loader hands to torch.load (pytorch_model.bin, *.pt, model.ckpt, a .bin shard, x.pt.1)
_LOADED_BY_NAME = re.compile(
    r"\.(" + "|".join(s[1:] for s in (*PICKLE_SUFFIXES, ".tar")) + r")(\.|$)", re.IGNORECASE
)


_DATA_SUFFIXES = (".safetensors", BURNPACK_SUFFIX, GGUF_SUFFIX)


def _data_reader(path: str, head: bytes) -> tuple[str, Callable[[str], object]] | None:
    """Burnpack's or GGUF's reader, by the file's magic, else by its name: a ``.bpk`` cut short
    is refused as Burnpack refuses it, not as "too short to be safetensors"."""
    found = _DATA_FORMATS.get(head[:4])
    if found is None:
        found = _DATA_BY_SUFFIX.get(os.path.splitext(path)[1].lower())
    return found


def _reported_when_unreadable(path: str, stream: FileScan) -> bool:
    """In a folder walk, an unreadable file is reported (and the folder is unreadable) when a
    loader opens it by its name: a ``.safetensors``, ``.bpk`` or ``.gguf`` file, or an empty file
    named like a pickle (a download cut short). A non-empty ``.bin`` that is no pickle (ggml,
    fastText) is someone else's format, and an empty ``.gitkeep`` nobody's checkpoint."""
    name = os.path.basename(path).lower()
    empty = stream.error == "file is empty"
    return name.endswith(_DATA_SUFFIXES) or (empty and _named_like_a_checkpoint(path))


def _named_like_a_checkpoint(path: str) -> bool:
    """A name some loader opens (an empty one is a download cut short; an empty .gitkeep or
    __init__.py, which no loader opens and which holds nothing to run, is no checkpoint)."""
    name = os.path.basename(path)
    return bool(_LOADED_BY_NAME.search(name)) or name.lower().endswith(_DATA_SUFFIXES)


def _torch_would_unpickle(path: str, head: bytes) -> bool:
    """Named like a checkpoint, and its first byte an opcode (else pickle.load stops at once)."""
    return (
        bool(head) and head[0] in OPCODES and bool(_LOADED_BY_NAME.search(os.path.basename(path)))
    )


def _cannot_follow(path: str, fmt: str, why: str | None) -> FileScan:
    """A file named like a checkpoint whose pickle reading stopped where CPython's might go on
    (a budget, a form we refuse): never "clean", since torch.load could read on and run code."""
    return FileScan(
        path,
        fmt,
        error=f"named like a checkpoint torch.load reads, and its pickle could not be followed "
        f"to its end ({why}); not judged",
    )


def _stream_of(path: str) -> tuple[FileScan, int]:
    """The pickle stream torch.load would read from byte 0, and how many pickles it held."""
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return FileScan(path, "unknown", error="file is empty"), 0
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                return _scan_stream(path, mm)
    except (OSError, ValueError) as e:
        return FileScan(path, "pickle", error=f"cannot read: {e}"), 0


def _scan_zip(path: str, fh: Any) -> FileScan:
    """Every ``*.pkl`` of the archive, one at a time, and how torch could read it otherwise."""
    try:
        zf = open_zip(path, fh)
        size = fh.seek(0, 2)
        findings = zip_problems(zf, fh, size)
        torchscript = is_torchscript(zf)
        infos = zf.infolist()
    except CheckpointError as e:
        return FileScan(path, "torch zip", error=e.reason)
    except Exception as e:  # zipfile raises assorted types on crafted archives
        return FileScan(path, "torch zip", error=f"damaged zip archive ({error_summary(e)})")
    if torchscript:
        findings.insert(
            0,
            "is a TorchScript archive: torch.load hands it to torch.jit.load, which runs the "
            "code it holds",
        )
    scan, error, budget = ScanPolicy(), None, _PKL_BUDGET
    for info in infos:
        if not fold(info.filename).endswith(".pkl"):
            continue
        budget -= info.file_size
        if budget < 0:
            error = f"its .pkl members hold over {format_bytes(_PKL_BUDGET)}; the rest not read"
            break
        try:
            data = read_member(path, zf, info, MAX_PICKLE_BYTES)
            PickleMachine(data, scan).run(0)
        except CheckpointError as e:
            error = e.reason
        except AmbiguousPickle as e:
            findings.append(f"{info.filename}: pickle {e}")
        except PickleError as e:
            error = f"{info.filename}: pickle {e}"
        data = b""
    fmt = "TorchScript" if torchscript else "torch zip"
    return FileScan(path, fmt, list(scan.seen.values()), error, findings)


def _scan_tar(path: str, fh: Any) -> FileScan:
    """torch.load's legacy tar path unpickles the members ``storages``, ``tensors``, ``pickle``."""
    scan, error = ScanPolicy(), None
    findings = [
        "is a tar-format checkpoint (torch < 0.4): torch.load unpickles its members; not read"
    ]
    for name, data in tar_pickles(fh, MAX_PICKLE_BYTES).items():
        pos = 0
        try:
            while pos < len(data):
                _, pos = PickleMachine(data, scan).run(pos)
        except AmbiguousPickle as e:
            findings.append(f"{name}: pickle {e}")
        except PickleError as e:
            if pos == 0:
                error = f"{name}: pickle {e}"
    return FileScan(path, "torch tar", list(scan.seen.values()), error, findings)


def _scan_stream(path: str, mm: mmap.mmap) -> tuple[FileScan, int]:
    """Pickles one after another: a legacy checkpoint's five, or a raw pickle's one (or more)."""
    scan = ScanPolicy()
    fmt, pos, count, error, findings = "pickle", 0, 0, None, []
    while pos < len(mm):
        try:
            obj, pos = PickleMachine(mm, scan).run(pos)
        except AmbiguousPickle as e:
            findings.append(f"pickle {e}")
            break
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
    return FileScan(path, fmt, list(scan.seen.values()), error, findings), count
