"""How the machine treats globals, calls and storages: loading (refuse at once) or scanning
(note every import and read on, calling nothing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .allowlist import (
    ALLOWED,
    ImportVerdict,
    StandIn,
    StorageRef,
    TensorRecord,
    _Plain,
    _Storage,
    qualname,
)
from .machine import Opaque, PickleError


class RefusedImport(Exception):
    """The pickle imports a global outside the allowlist; the read stopped before using it."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class LoadPolicy:
    """Build the object graph from stand-ins; the first refused global stops the read."""

    def __init__(self) -> None:
        self.item_size: dict[str, int] = {}  # storage key -> bytes per element (legacy layout)
        self.seen: dict[str, ImportSeen] = {}  # every import, all allowed (else the read stopped)

    def resolve_global(self, module: str, name: str) -> Any:
        found = ALLOWED.get(f"{module}.{name}")
        if found is None:
            raise RefusedImport(qualname(module, name))
        _note(self.seen, found.qualname, found.verdict)
        return found

    def persistent_load(self, pid: Any) -> Any:
        if not isinstance(pid, tuple) or len(pid) not in (5, 6) or pid[0] != "storage":
            raise PickleError("refers to an outside object that is not a torch storage")
        cls, key, _location, numel = pid[1:5]
        if not isinstance(cls, _Storage) or not isinstance(key, str) or type(numel) is not int:
            raise PickleError("names a storage in a form torch does not write")
        if numel < 0:
            raise PickleError("names a storage of negative size")
        if len(pid) == 6 and pid[5] is not None:
            raise PickleError(
                "uses a storage view (torch < 1.0 layout), which this tool cannot read"
            )
        if cls.dtype is None and "Untyped" not in cls.qualname:
            raise PickleError(f"holds a {cls.qualname}, which safetensors cannot store")
        self.item_size.setdefault(key, cls.dtype.bits // 8 if cls.dtype else 1)
        return StorageRef(key, cls.dtype, numel)

    def call(self, func: Any, args: tuple) -> Any:
        if not isinstance(func, StandIn):
            raise PickleError(f"calls a {type(func).__name__}, which is not callable here")
        if not isinstance(args, tuple):
            raise PickleError("calls with arguments that are not a tuple (corrupt)")
        return func.call(args)

    def build(self, obj: Any, state: Any) -> Any:
        # a state_dict carries its `_metadata` as state, a tensor its Python attributes: neither
        # is a tensor, and nothing is set; BUILD on anything else is not something torch writes
        if isinstance(obj, (dict, TensorRecord)):
            return obj
        if isinstance(obj, StandIn):
            raise PickleError(
                f"sets attributes of {obj.qualname} (BUILD on a class), which torch never does"
            )
        raise PickleError(f"sets state on a {type(obj).__name__}, which torch never does")


@dataclass
class ImportSeen:
    """One global a pickle imports, how often, and what it means."""

    name: str
    verdict: ImportVerdict
    count: int = 1


def _note(seen: dict[str, ImportSeen], name: str, verdict: ImportVerdict) -> None:
    entry = seen.get(name)
    if entry is None:
        seen[name] = ImportSeen(name, verdict)
    else:
        entry.count += 1


class ScanPolicy:
    """Record every import; call only our own container constructors, nothing else."""

    def __init__(self) -> None:
        self.seen: dict[str, ImportSeen] = {}

    def resolve_global(self, module: str, name: str) -> Any:
        found = ALLOWED.get(f"{module}.{name}")
        verdict = found.verdict if found is not None else ImportVerdict.REFUSED
        _note(self.seen, qualname(module, name), verdict)
        return found if found is not None else Opaque()

    def persistent_load(self, pid: Any) -> Any:
        return Opaque()

    def call(self, func: Any, args: tuple) -> Any:
        if isinstance(func, _Plain):
            try:
                return func.call(args)
            except (PickleError, TypeError, ValueError):
                return Opaque()
        return Opaque()

    def build(self, obj: Any, state: Any) -> Any:
        if isinstance(obj, StandIn):  # would change an allowed class for everything after it
            _note(
                self.seen,
                f"BUILD on {obj.qualname} (sets attributes of a class)",
                ImportVerdict.REFUSED,
            )
        return obj
