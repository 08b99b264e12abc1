"""How the machine treats globals, calls and storages: loading (allowlisted stand-ins, and inert
placeholders for anything else) or scanning (note every import and read on, calling nothing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .allowlist import (
    ALLOWED,
    ImportVerdict,
    StandIn,
    StorageRef,
    _Storage,
    qualname,
)
from .machine import Opaque, PickleError
from .plain_values import _Plain
from .records import AnyTensor
from .tensor_state import setstate
from .unknown import Unknown, UnreadTensor, holds_storage, tainted_by
from .values import bounded_repr


class LoadPolicy:
    """Build the object graph from stand-ins; a global outside the allowlist becomes an inert
    :class:`~.unknown.Unknown`, and a tensor rebuilt with one an :class:`~.unknown.UnreadTensor`."""

    def __init__(self) -> None:
        self.item_size: dict[str, int] = {}  # storage key -> bytes per element (legacy layout)
        self.storages: dict[str, StorageRef] = {}  # key -> the first id naming it, as torch keeps
        self.seen: dict[str, ImportSeen] = {}  # every import; REFUSED ones became placeholders
        self.unknown_storages: dict[str, str] = {}  # key -> the unknown class naming it

    def resolve_global(self, module: str, name: str) -> Any:
        found = ALLOWED.get(f"{module}.{name}")
        if found is None:
            name = qualname(module, name)
            _note(self.seen, name, ImportVerdict.REFUSED)
            return Unknown(name)  # a new one each time: state given to one is not shared
        _note(self.seen, found.qualname, found.verdict)
        return found

    @property
    def unknown(self) -> list[str]:
        """The globals outside the allowlist, in the order the pickle names them."""
        return [s.name for s in self.seen.values() if s.verdict is ImportVerdict.REFUSED]

    def persistent_load(self, pid: Any) -> Any:
        if not isinstance(pid, tuple) or len(pid) not in (5, 6) or pid[0] != "storage":
            raise PickleError("refers to an outside object that is not a torch storage")
        cls, key, _location, numel = pid[1:5]
        if isinstance(cls, Unknown) and isinstance(key, str) and type(numel) is int:
            self.unknown_storages.setdefault(key, cls.qualname)
            return UnreadTensor(f"a storage of class {cls.qualname}")  # its tensor is not read
        if not isinstance(cls, _Storage) or not isinstance(key, str) or type(numel) is not int:
            raise PickleError("names a storage in a form torch does not write")
        if numel < 0:
            raise PickleError("names a storage of negative size")
        if len(pid) == 6 and pid[5] is not None:
            raise PickleError(
                "uses a storage view (torch < 1.0 layout), which this tool cannot read"
            )
        if cls.dtype is None and not cls.unheld and not cls.untyped:  # quantized
            raise PickleError(f"holds a {cls.qualname}, which safetensors cannot store")
        if (
            cls.untyped and len(pid) == 6
        ):  # the legacy layout: torch asks UntypedStorage for a dtype
            raise PickleError(
                f"names a {cls.qualname} in the legacy layout, which torch.load cannot read"
            )
        return self._storage(StorageRef(key, cls.dtype, numel, cls.unheld), cls)

    def _storage(self, ref: StorageRef, cls: _Storage) -> StorageRef:
        """torch loads a key once: a later id naming it gets the first storage, its dtype and size
        (an empty first storage is not kept, and a later non-empty one is then unreadable)."""
        first = self.storages.get(ref.key)
        if first is None or (first.numel == 0 and ref.numel == 0):
            self.storages.setdefault(ref.key, ref)
            self.item_size.setdefault(ref.key, cls.item_size)
            return ref
        if first.numel == 0:
            raise PickleError(
                f"names storage {bounded_repr(ref.key, 80)} first empty, then with {ref.numel:,} elements: "
                "torch.load reads uninitialized memory or fails"
            )
        return first

    def call(self, func: Any, args: tuple) -> Any:
        if not isinstance(args, tuple):
            raise PickleError("calls with arguments that are not a tuple (corrupt)")
        if isinstance(func, UnreadTensor):  # functools.partial(rebuild, storage, …)(…)
            return UnreadTensor(func.needs)
        if isinstance(func, Unknown):  # recorded, never called
            if holds_storage(args):  # an unknown function rebuilding a tensor from a storage
                return UnreadTensor(func.qualname)
            return Unknown(func.qualname, called=True, args=args)
        if not isinstance(func, StandIn):
            raise PickleError(f"calls a {type(func).__name__}, which is not callable here")
        try:
            return func.call(args)
        except (PickleError, TypeError, ValueError):
            # our constructor refused an argument: if it is an unknown object, only this value
            # is lost (a tensor is named as not read), not the whole file
            needs = tainted_by(args)
            if needs is None or func.verdict is ImportVerdict.UNSUPPORTED:
                raise
            if func.verdict is ImportVerdict.TENSOR:
                return UnreadTensor(needs)
            return Unknown(f"{func.qualname} of {needs}", called=True)

    def build(self, obj: Any, state: Any) -> Any:
        # a state_dict carries its `_metadata` as state (attributes: no item changes); a tensor
        # takes its state by Tensor.__setstate__, in place (the memo holds the same object)
        if isinstance(obj, (dict, UnreadTensor)):
            return obj
        if isinstance(obj, Unknown):  # kept as data: no __setstate__ is looked up or called
            obj.state = state
            return obj
        if isinstance(obj, AnyTensor):
            setstate(obj, state)
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
