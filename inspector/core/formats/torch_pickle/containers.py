"""Where torch's readers and ours could see different files in the same bytes.

``torch.load`` decides by the first bytes: ``PK\\x03\\x04`` is a zip read by miniz (names looked up
ASCII-case-insensitively, the central directory taken at the offset the end record names, the
archive folder taken from the first member), else it tries Python's ``tarfile`` (a V7 tar without
the ``ustar`` magic counts), else it unpickles from byte 0. Python's ``zipfile`` (which we use to
list members) differs from miniz on each of those points, so any archive where the difference
could matter is a finding for ``scan`` and refused by ``list``/``cast``: two members whose names
fold to the same, a NUL in a name, a central directory not where the end record says, an end
record that is not the file's last bytes, encrypted members, a data.pkl outside the first member's
folder. A TorchScript archive (torch.load hands it to torch.jit.load, which runs its code) and a
tar file (torch.load unpickles its members) are findings of their own.
"""

from __future__ import annotations

import struct
import tarfile
import zipfile
from typing import Any

from .values import bounded_repr

_EOCD = b"PK\x05\x06"
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def fold(name: str) -> str:
    """A member name as miniz compares it: ASCII letters folded, nothing else."""
    return name.translate(_ASCII_LOWER)


def zip_problems(zf: zipfile.ZipFile, fh: Any, size: int) -> list[str]:
    """Every way this zip could read differently in torch (miniz) and here (zipfile)."""
    problems: list[str] = []
    infos = zf.infolist()
    seen: dict[str, str] = {}
    for info in infos:
        name = info.filename  # zipfile cuts a name at a NUL; miniz compares the whole name
        if "\x00" in info.orig_filename:
            problems.append(f"member name {bounded_repr(info.orig_filename, 80)} holds a NUL byte")
        other = seen.get(fold(name))
        if other is not None:
            problems.append(
                f"members {bounded_repr(other, 80)} and {bounded_repr(name, 80)} have the same name to torch's zip reader "
                "(it ignores case)"
                if other != name
                else f"member {bounded_repr(name, 80)} is stored twice"
            )
        seen.setdefault(fold(name), name)
        if info.flag_bits & 0x1:
            problems.append(f"member {bounded_repr(name, 80)} is encrypted")
    problems += _directory_problems(zf, fh, size)
    if infos:
        archive = infos[0].filename.split("/", 1)[0] + "/"
        pkls = [i.filename for i in infos if fold(i.filename).endswith("/data.pkl")]
        if pkls and not any(p.startswith(archive) for p in pkls):
            problems.append(
                f"its data.pkl is not in the folder of its first member ({archive}), where "
                "torch looks for it"
            )
    return problems


def _directory_problems(zf: zipfile.ZipFile, fh: Any, size: int) -> list[str]:
    """The end record must be the file's last bytes and name the central directory zipfile
    read: else miniz (offset from the record) and zipfile (record minus directory size, which
    absorbs prepended bytes) read two different directories."""
    tail_len = min(size, (1 << 16) + 22)
    fh.seek(size - tail_len)
    tail = fh.read(tail_len)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < 22:
        return ["its end-of-directory record is damaged"]
    (comment_len,) = struct.unpack_from("<H", tail, at + 20)
    problems = []
    if at + 22 + comment_len != len(tail):
        problems.append("its end-of-directory record is not at the end of the file")
    # zip64: zipfile takes the zip64 end record just before the locator, miniz the one at the
    # offset the locator names; two records can name two directories
    locator = tail[at - 20 : at] if at >= 20 else b""
    if locator[:4] == b"PK\x06\x07":
        (named,) = struct.unpack_from("<Q", locator, 8)
        if named != size - tail_len + at - 20 - 56:
            problems.append(
                "its zip64 end record is not where its locator says (a second directory)"
            )
    start_dir = getattr(zf, "start_dir", None)
    endrec = zipfile._EndRecData(fh)  # the offset the record names (zip64 included)
    if endrec is None or start_dir != endrec[zipfile._ECD_OFFSET]:
        problems.append(
            "its central directory is not where its end record says (bytes prepended, or a "
            "second directory)"
        )
    return problems


def is_torchscript(zf: zipfile.ZipFile) -> bool:
    """torch.load's test (``constants.pkl`` among the records), widened to any code/ folder."""
    names = [i.filename for i in zf.infolist()]
    archive = names[0].split("/", 1)[0] + "/" if names else ""
    records = {n[len(archive) :] for n in names if n.startswith(archive)}
    return (
        "constants.pkl" in records
        or any(fold(n).endswith("/constants.pkl") for n in names)
        or any("/code/" in fold(n) or fold(n).endswith(".py") for n in names)
    )


def is_torch_tar(fh: Any) -> bool:
    """What torch.load's legacy path tries first: Python's tarfile, as torch opens it."""
    start = fh.tell()
    try:
        with tarfile.open(fileobj=fh, mode="r:") as tar:
            # an empty archive (all zeros) makes torch fail before it unpickles anything
            return tar.firstmember is not None
    except RecursionError:  # a chain of long-name headers deeper than tarfile can follow
        return True  # a tar all the same (torch fails on it too): refused as one
    except (tarfile.TarError, OSError, ValueError, EOFError, UnicodeDecodeError):
        return False
    finally:
        fh.seek(start)


def tar_pickles(fh: Any, limit: int) -> dict[str, bytes]:
    """The members torch's tar path unpickles (``storages``, ``tensors``, ``pickle``), each
    read only up to ``limit`` bytes: for scan to list what they import."""
    out: dict[str, bytes] = {}
    fh.seek(0)
    try:
        with tarfile.open(fileobj=fh, mode="r:") as tar:
            for name in ("storages", "tensors", "pickle"):
                try:
                    member = tar.getmember(name)
                except KeyError:
                    continue
                try:  # a link is read as torch's extract copies it where no file on disk
                    # is its target: the member tarfile's lookup finds (a symbolic link is
                    # copied so where none can be made, on Windows)
                    f = tar.extractfile(member)
                except KeyError:  # it names no member: torch's extract fails, or links to a
                    continue  # file outside (unknown here, and the tar finding says so)
                if f is not None:
                    out[name] = f.read(limit)
    except (tarfile.TarError, OSError, ValueError, EOFError, UnicodeDecodeError, RecursionError):
        pass
    return out
