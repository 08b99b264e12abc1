"""Inert placeholders for what a pickle names outside the allowlist (``omegaconf.DictConfig``,
``argparse.Namespace``, ``os.system``…), so one unknown object does not cost a whole checkpoint.

A placeholder only *records*: the name it was given, the arguments a call passed it, the state a
``BUILD`` gave it, the items added to it. Nothing is imported, looked up or called, and it defines
no special method that Python code could reach (it hashes by identity, is not iterable, has no
``__setstate__``): calling it gives another placeholder, whatever the arguments.

A tensor is read only when allowlisted code alone rebuilds it. One whose rebuild needs an unknown
object (an unknown rebuild function or storage class, a tensor subclass) becomes an
:class:`UnreadTensor` naming that object: listed, left out of a cast, never guessed at.
"""

from __future__ import annotations

from typing import Any

from .records import StorageRef
from .values import bounded_repr

_SEARCH_ITEMS = 256  # what a search through a call's arguments looks at, at most
_SEARCH_DEPTH = 3


class Unknown:
    """A global outside the allowlist (``called`` False), or what calling one gave (True)."""

    __slots__ = ("args", "called", "items", "qualname", "state")

    def __init__(self, qualname: str, called: bool = False, args: tuple = ()) -> None:
        self.qualname, self.called, self.args = qualname, called, args
        self.state: Any = None  # the last BUILD's state: data, never applied
        self.items: dict | list | set | None = None  # SETITEMS / APPENDS / ADDITEMS on it

    def items_of(self, kind: type) -> dict | list | set:
        """Where items added to it go: kept as data (a dict or list subclass may hold tensors);
        a second kind of items goes nowhere."""
        if self.items is None:
            self.items = kind()
        return self.items if isinstance(self.items, kind) else kind()

    def text(self) -> str:
        if self.called:
            return f"{self.qualname} object, not built (unknown code, not executed)"
        return f"{self.qualname} (unknown, not imported)"

    def parts(self) -> list[tuple | list | dict]:
        """The containers it holds, whose items :meth:`children` names: the call's arguments, its
        items, its state's dicts. A walk counts each once, however many placeholders share it."""
        found: list[tuple | list | dict] = [self.args]
        if isinstance(self.items, (dict, list)):
            found.append(self.items)
        state = self.state
        for part in state if isinstance(state, tuple) and len(state) == 2 else (state,):
            if isinstance(part, dict):
                found.append(part)
        return found

    def children(self) -> list[tuple[str, object]]:
        """What it holds that may be a tensor, by the names a walk gives them: the call's
        arguments by position, its items, then the attributes its state sets."""
        out: list[tuple[str, object]] = []
        for part in self.parts():
            if isinstance(part, dict):
                out += [(_key(k), v) for k, v in part.items()]
            else:
                out += [(str(i), v) for i, v in enumerate(part)]
        state = self.state
        for part in state if isinstance(state, tuple) and len(state) == 2 else (state,):
            if part is not None and not isinstance(part, dict):
                out.append(("state", part))
        return out

    def __repr__(self) -> str:
        return f"<{self.qualname}>"


class UnreadTensor:
    """A tensor whose rebuild needs an unknown object: named, never read or written."""

    __slots__ = ("needs",)

    def __init__(self, needs: str) -> None:
        self.needs = needs  # the unknown object's name

    def text(self) -> str:
        return (
            f"tensor not read: its rebuild needs {self.needs}, which was not executed; "
            "left out of cast"
        )


def _key(key: object) -> str:
    return key if isinstance(key, str) else bounded_repr(key, 120)


def tainted_by(args: object) -> str | None:
    """The name of the first unknown object among ``args`` (a bounded look through tuples,
    lists and dicts), or None: what a rebuild that failed on it is refused for."""
    for item in _bounded_items(args):
        if isinstance(item, Unknown):
            return item.qualname
        if isinstance(item, UnreadTensor):
            return item.needs
    return None


def holds_storage(args: object) -> bool:
    """Whether a call's arguments hold a stored storage: then it rebuilds a tensor."""
    return any(isinstance(item, StorageRef) for item in _bounded_items(args))


def _bounded_items(value: object) -> list[object]:
    found: list[object] = []
    level = [value]
    for _ in range(_SEARCH_DEPTH):
        nested: list[object] = []
        for item in level:
            parts = item.values() if isinstance(item, dict) else item
            if not isinstance(item, (tuple, list, dict)):
                continue
            for part in parts:
                if len(found) >= _SEARCH_ITEMS:
                    return found
                found.append(part)
                nested.append(part)
        level = nested
    return found
