"""What the pickle interpreter shares with its opcode handlers and policies: its error, the
opaque value a scan uses, the names given to globals that have no plain name, the key check."""

from __future__ import annotations

from typing import Any

MAX_OBJECTS = 20_000_000  # a 200k-tensor state dict builds about 5M
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


def check_key(key: Any, depth: int = 0) -> Any:
    """A dict key or set item that is safe to hash. Hashing nests in C without a depth guard:
    a key of a million nested tuples would crash the process, so keys nest at most 16 deep."""
    if isinstance(key, _FLAT_KEYS):
        return key
    if isinstance(key, (tuple, frozenset)):
        if depth >= MAX_KEY_DEPTH:
            raise PickleError(f"uses a key nested more than {MAX_KEY_DEPTH} levels deep")
        for part in key:
            check_key(part, depth + 1)
        return key
    if type(key).__hash__ is object.__hash__:  # hashed by identity: our own records
        return key
    raise PickleError(f"uses a {type(key).__name__} as a dict key or set item")
