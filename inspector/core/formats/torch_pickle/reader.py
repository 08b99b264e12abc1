"""Open a PyTorch pickle checkpoint as a :class:`Header` of tensors, or scan what it imports.

Nothing is executed and no module is imported: see :mod:`.machine` and :mod:`.allowlist`.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, field

from ...errors import CheckpointError, RefusedPickleError
from ...layout import Header, TensorInfo
from ...regular_file import open_regular
from .allowlist import ImportVerdict
from .archive import (
    PickleFormat,
    StorageSpan,
    check_legacy_header,
    legacy_storage_spans,
    read_zip,
)
from .containers import is_torch_tar
from .machine import AmbiguousPickle, PickleError, PickleMachine
from .names import NamedValue, flatten, place_tensor
from .policies import ImportSeen, LoadPolicy, ScanPolicy
from .values import bounded_repr

FORMAT_NAME = "pytorch pickle"
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")


@dataclass
class PickleFacts:
    """What a pickle checkpoint holds besides tensors: its layout, plain values, its imports."""

    format: PickleFormat
    values: list[NamedValue] = field(default_factory=list)
    imports: list[ImportSeen] = field(default_factory=list)

    @property
    def unknown(self) -> list[str]:
        """Imports outside the allowlist: built as inert placeholders, never executed (torch's
        ``weights_only=True`` refuses the file for them)."""
        return [i.name for i in self.imports if i.verdict is ImportVerdict.REFUSED]


def pickle_facts(header: Header) -> PickleFacts | None:
    """The pickle facts of a file this format read; None for a file of another format."""
    return header.facts if isinstance(header.facts, PickleFacts) else None


def looks_like_pickle(path: str, head: bytes) -> bool:
    """A zip (torch ≥ 1.6), a pickle with a protocol header, or an old-protocol pickle with a
    checkpoint suffix. Called only after the file was found not to be safetensors."""
    if head.startswith(b"PK\x03\x04"):
        return True
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return True
    return path.lower().endswith(PICKLE_SUFFIXES) and head[:1] in (b"(", b"c", b"]", b"}")


def read_pickle_checkpoint(path: str) -> Header:
    """Tensors (names, dtypes, shapes, where their bytes are) and facts of one pickle file."""
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(512)
        if head.startswith(b"PK\x03\x04"):
            layout = read_zip(path, f)
            policy = LoadPolicy()
            root, _ = _load_at(path, layout.pickle, 0, policy)
            return _header(path, size, root, PickleFormat.ZIP, policy, layout.storage)
        f.seek(0)
        if is_torch_tar(f):
            raise CheckpointError(
                path,
                "is a tar-format PyTorch checkpoint (torch < 0.4), which this tool does not read; "
                "torch.load unpickles its members (code in them runs): only if you trust it, load "
                "it with torch and save its state_dict with safetensors (see: checkpoint-inspector "
                "scan)",
            )
        if size == 0:
            raise CheckpointError(path, "file is empty")
        try:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as e:
            raise CheckpointError(path, f"cannot map the file: {e}") from None
    with mm:
        return _read_legacy(path, mm, size)


def refuse_polyglot(path: str) -> None:
    """A valid safetensors file whose bytes are also a pickle that imports something: under a
    pickle name torch.load would unpickle it, so it is refused, not read as data."""
    scan = ScanPolicy()
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            PickleMachine(mm, scan).run(0)
    except (OSError, ValueError, PickleError, CheckpointError):
        pass  # not a pickle (the usual case: its first byte is no opcode)
    if scan.seen:
        names = ", ".join(scan.seen)
        raise CheckpointError(
            path,
            f"is both a safetensors file and a pickle that imports {names}; refused: torch.load "
            "of it would run that (see: checkpoint-inspector scan)",
        )


def _read_legacy(path: str, mm: mmap.mmap, size: int) -> Header:
    policy = LoadPolicy()
    pos = 0
    firsts = []
    try:
        for _ in range(3):
            obj, pos = _load_at(path, mm, pos, policy)
            firsts.append(obj)
            if len(firsts) == 1 and not isinstance(obj, int):
                raise CheckpointError(
                    path,
                    "is a plain Python pickle, not a torch.save checkpoint (no PyTorch magic "
                    "number)",
                )
        check_legacy_header(path, firsts)
    except CheckpointError:
        if policy.unknown:  # a pickle of code, not a checkpoint: named as such
            raise _refusal(path, mm) from None
        raise
    root, pos = _load_at(path, mm, pos, policy)
    keys, pos = _load_at(path, mm, pos, policy)
    for key in keys if isinstance(keys, list) else ():
        if key in policy.unknown_storages:  # the bytes after it cannot be told apart
            raise CheckpointError(
                path,
                f"legacy checkpoint: storage {bounded_repr(key, 80)} is of class "
                f"{policy.unknown_storages[key]}, unknown here: its bytes per element, and so "
                "where the storages after it start, are unknown; nothing was executed (see: "
                "checkpoint-inspector scan)",
            )
    spans = legacy_storage_spans(path, mm, pos, keys, policy.item_size)
    return _header(path, size, root, PickleFormat.LEGACY, policy, spans.get)


def _load_at(path: str, data: object, pos: int, policy: LoadPolicy) -> tuple[object, int]:
    try:
        return PickleMachine(data, policy).run(pos)
    except AmbiguousPickle as e:
        raise CheckpointError(
            path,
            f"{e}; refused: torch would read another pickle here (see: checkpoint-inspector scan)",
        ) from None
    except PickleError as e:
        if policy.unknown:  # what it imports says more than where it broke
            raise _refusal(path, data) from None
        raise CheckpointError(path, f"pickle {e}") from None


def _refusal(path: str, data: object) -> RefusedPickleError:
    """Name every refused import, not only the first the read met: scan the whole pickle."""
    scan = ScanPolicy()
    pos = 0
    try:
        while pos < len(data):  # type: ignore[arg-type]
            _, pos = PickleMachine(data, scan).run(pos)
    except PickleError:
        pass  # what was seen before the damage is enough to name
    refused = [s.name for s in scan.seen.values() if s.verdict is ImportVerdict.REFUSED]
    return RefusedPickleError(path, refused)


def _header(
    path: str, size: int, root: object, fmt: PickleFormat, policy: LoadPolicy, locate: object
) -> Header:
    try:
        records, values = flatten(root)
    except PickleError as e:
        raise CheckpointError(path, f"pickle {e}") from None
    if policy.unknown and not records:  # no tensor to show: a pickle of code, as before
        raise RefusedPickleError(path, policy.unknown)

    def span(key: str) -> StorageSpan:
        found = locate(key)  # type: ignore[operator]
        if found is None:
            raise CheckpointError(
                path, f"storage {bounded_repr(key, 80)} is named in the pickle but not stored"
            )
        return found

    tensors: list[TensorInfo] = []
    seen: set[str] = set()
    for name, rec in records:
        if name in seen:
            # {"a.b": t1, "a": {"b": t2}}: both are listed and cast, the later one renamed
            first, name = name, _unique(name, seen)
            values.append(
                NamedValue(
                    name,
                    f"a second tensor named {bounded_repr(first, 80)} once keys are joined with "
                    "dots: listed and written under this name",
                )
            )
        seen.add(name)
        try:
            tensors.append(place_tensor(path, name, rec, span))
        except PickleError as e:
            raise CheckpointError(path, str(e)) from None
    facts = PickleFacts(fmt, values, list(policy.seen.values()))
    return Header(path, tensors, None, 0, size, FORMAT_NAME, facts=facts)


def _unique(name: str, seen: set[str]) -> str:
    """``name#2``, ``name#3``, ...: the first free one (deterministic: in walk order)."""
    k = 2
    while f"{name}#{k}" in seen:
        k += 1
    return f"{name}#{k}"


__all__ = ["PickleFacts", "looks_like_pickle", "read_pickle_checkpoint"]
