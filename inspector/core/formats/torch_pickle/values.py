"""What the pickle interpreter shares with its opcode handlers and policies: its error, the
opaque value a scan uses, the names given to globals that have no plain name, the key check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_OBJECTS = 16_000_000  # budget units; a 200k-tensor state dict uses about 9M (5M objects)
COMPUTED = "<computed>"  # the module and name of a global whose name is not a plain string
EXTENSION = "<copyreg extension>"  # EXT1/2/4: a code looked up in the unpickler's registry


class PickleError(Exception):
    """The pickle cannot be read as a tensor checkpoint (malformed, or too large to be one)."""


class AmbiguousPickle(PickleError):
    """The bytes read as different pickles depending on the reader (a FRAME that does not end
    where its opcodes end): ``scan`` reports it as a finding, ``list``/``cast`` refuse the file."""


class Opaque:
    """A value scanning could not know (what a refused call would return). Items added to it are
    dropped, so a scan reads on to the next import instead of stopping at the first."""

    __slots__ = ()


_FLAT_KEYS = (str, int, float, bool, type(None), bytes, complex)
MAX_KEY_DEPTH = 16


MAX_KEY_SIZE = 4096  # items of a key counted as a tree: what hashing it walks, in C


def check_key(key: Any, depth: int = 0) -> Any:
    """A dict key or set item that is safe to hash. Hashing nests in C without a depth guard and
    without remembering shared parts: a key of a million nested tuples would crash the process,
    and a tuple DAG (each level holding the one below twice) costs 2**depth per hash. So keys
    nest at most 16 deep and count at most 4096 items as a tree; the count is taken once per
    distinct tuple (a walk that remembers), so checking is linear in the key's size in memory."""
    if isinstance(key, _FLAT_KEYS):
        return key
    if isinstance(key, (tuple, frozenset)):
        if _tree_size(key, {}, depth)[0] > MAX_KEY_SIZE:
            raise PickleError(f"uses a key of more than {MAX_KEY_SIZE:,} items (counted as a tree)")
        return key
    if type(key).__hash__ is object.__hash__:  # hashed by identity: our own records
        return key
    raise PickleError(f"uses a {type(key).__name__} as a dict key or set item")


def _tree_size(key: Any, sizes: dict[int, tuple[int, int]], depth: int) -> tuple[int, int]:
    """The items of ``key`` counted as a tree, and how many levels of tuples it nests. Both are
    remembered per distinct tuple: a shared tuple met again deeper nests the key deeper."""
    if isinstance(key, _FLAT_KEYS):
        return 1, 0
    if not isinstance(key, (tuple, frozenset)):
        if type(key).__hash__ is object.__hash__:
            return 1, 0
        raise PickleError(f"uses a {type(key).__name__} as a dict key or set item")
    known = sizes.get(id(key))
    if known is None:
        if depth >= MAX_KEY_DEPTH:
            raise PickleError(f"uses a key nested more than {MAX_KEY_DEPTH} levels deep")
        total, below = 1, 0
        for part in key:
            size, levels = _tree_size(part, sizes, depth + 1)
            total += size
            below = max(below, levels)
            if total > MAX_KEY_SIZE:
                break
        known = sizes[id(key)] = (total, below + 1)
    if depth + known[1] > MAX_KEY_DEPTH:
        raise PickleError(f"uses a key nested more than {MAX_KEY_DEPTH} levels deep")
    return known


def bounded_repr(value: object, limit: int = 120) -> str:
    """``repr`` that stops after ``limit`` characters: a value from a file may be a tuple DAG
    whose full repr is exponential, or an integer too long for ``str`` (a ValueError)."""
    parts: list[str] = []
    size = 0
    stack: list[object] = [value]
    while stack and size <= limit:
        item = stack.pop()
        if isinstance(item, _Token):
            text = item.text
        elif type(item) is tuple:
            stack.append(_CLOSE if len(item) != 1 else _CLOSE_ONE)
            for i, child in enumerate(reversed(item)):
                stack.append(child)
                if i < len(item) - 1:
                    stack.append(_COMMA)
            text = "("
        elif type(item) is int and abs(item) > 10**40:
            text = "<huge int>"
        elif isinstance(item, (int, float, bool, type(None), complex)):
            text = repr(item)
        elif isinstance(item, (str, bytes)):  # clipped, and marked so: not taken for the whole
            text = repr(item[:limit]) + ("…" if len(item) > limit else "")
        else:  # a stand-in names what it stands for; anything else only its type
            name = getattr(item, "qualname", None)
            text = name if isinstance(name, str) else f"<{type(item).__name__}>"
        parts.append(text)
        size += len(text)
    out = "".join(parts)
    return out if not stack else out[:limit] + "…"


@dataclass(frozen=True)
class _Token:
    text: str


_CLOSE, _CLOSE_ONE, _COMMA = _Token(")"), _Token(",)"), _Token(", ")
