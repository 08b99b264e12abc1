"""Containers and scalars a checkpoint pickle may build (OrderedDict, Counter, set, bytes,
torch.Size, torch.device, ...), each by a constructor of ours that checks its arguments."""

from __future__ import annotations

from typing import Any

from .stand_ins import ImportVerdict, StandIn
from .values import PickleError, check_key

_FILLED_BY_INIT = {"set", "bytearray", "OrderedDict", "Counter"}


class _Plain(StandIn):
    """Containers and scalars by our own constructors."""

    def __init__(self, qualname: str, make: Any) -> None:
        super().__init__(qualname, ImportVerdict.CONTAINER)
        self.make = make
        # NEWOBJ is cls.__new__(cls, *args): a mutable container's __new__ ignores its
        # arguments (its __init__ would fill it), so torch.load gives it empty
        self.new_ignores_args = qualname.rsplit(".", 1)[1] in _FILLED_BY_INIT

    def call(self, args: tuple) -> Any:
        return self.make(*args)


def _ordered_dict(items: Any = ()) -> dict:
    out: dict = {}
    for pair in list(items):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise PickleError("an OrderedDict is built from items that are not pairs")
        out[check_key(pair[0])] = pair[1]
    return out


def _counter(items: Any = ()) -> dict:
    """``Counter(mapping)`` (what pickling a Counter writes) copies it; ``Counter(items)`` counts."""
    if isinstance(items, dict):
        return dict(items)
    if not isinstance(items, (list, tuple, str, bytes)):
        raise PickleError(f"Counter is built from a {type(items).__name__}")
    counts: dict = {}
    for item in items:
        counts[check_key(item)] = counts.get(item, 0) + 1
    return counts


def _device(kind: Any = "", index: Any = None) -> str:
    """``torch.device("cuda", 0)`` (how a device pickles) or ``torch.device("cuda:0")``: as torch
    prints it, ``cuda:0``."""
    text = _text(kind)
    if index is None:
        return text
    if type(index) is not int or index < 0 or ":" in text:
        raise PickleError("a device is named with an index that is not a non-negative integer")
    return f"{text}:{index}"


def _encode(text: Any, encoding: str = "utf-8") -> bytes:
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1", "utf-8", "utf8"):
        raise PickleError("_codecs.encode called with something other than text and latin1")
    return text.encode(encoding)


def _one(kind: type) -> Any:
    def make(items: Any = ()) -> Any:
        if not isinstance(items, (list, tuple, set, frozenset, bytes, str)):
            raise PickleError(f"{kind.__name__} is built from a {type(items).__name__}")
        if kind in (set, frozenset):
            return kind(check_key(x) for x in items)
        return kind(items)

    return make


def _complex(real: Any = 0.0, imag: Any = 0.0) -> complex:
    if not all(type(v) in (int, float) for v in (real, imag)):
        raise PickleError("complex is built from something that is not a number")
    return complex(real, imag)


def _text(value: Any = "") -> str:
    if not isinstance(value, (str, int)):
        raise PickleError("a device or layout is named by something that is not text")
    return str(value)


def plain_stand_ins() -> list[_Plain]:
    """Every container and scalar global a checkpoint may import, with its constructor."""
    made = [
        _Plain("collections.OrderedDict", _ordered_dict),
        _Plain("collections.Counter", _counter),
        _Plain("torch.Size", _one(tuple)),
        _Plain("torch.device", _device),
        _Plain("torch.serialization._get_layout", _text),
        _Plain("_codecs.encode", _encode),
        _Plain("builtins.set", _one(set)),
        _Plain("builtins.frozenset", _one(frozenset)),
        _Plain("builtins.bytearray", _one(bytearray)),
        _Plain("builtins.complex", _complex),
    ]
    by_name = {p.qualname: p for p in made}
    for legacy in ("__builtin__.set", "__builtin__.frozenset", "__builtin__.bytearray"):
        made.append(_Plain(legacy, by_name[legacy.replace("__builtin__", "builtins")].make))
    return made
