"""A pickle interpreter that never executes: opcodes are decoded and applied by this code alone.

``pickle.load`` resolves every ``GLOBAL`` by importing a module and calls whatever it finds; that is
how a checkpoint runs ``os.system``. Here a global is only a *name*, handed to ``resolve_global``,
which returns one of our own stand-ins (see :mod:`.allowlist`) or refuses. Calls (``REDUCE``,
``NEWOBJ``, ``OBJ``, ``INST``), ``BUILD`` and persistent ids only ever reach those stand-ins.

Work and memory are bounded: every object the pickle builds counts against ``max_objects``, and a
string or bytes argument cannot be longer than what is left of the buffer.
"""

from __future__ import annotations

import codecs
import struct
from collections.abc import Callable
from typing import Any, Protocol

from ..errors import CheckpointError

MAX_OBJECTS = 20_000_000  # a 200k-tensor state dict builds about 5M
COMPUTED = "<computed>"  # the module and name of a global whose name is not a plain string
EXTENSION = "<copyreg extension>"  # EXT1/2/4: a code looked up in the unpickler's registry


class PickleError(Exception):
    """The pickle cannot be read as a tensor checkpoint (malformed, or too large to be one)."""


class Opaque:
    """A value scanning could not know (what a refused call would return). Items added to it are
    dropped, so a scan reads on to the next import instead of stopping at the first."""

    __slots__ = ()


class Policy(Protocol):
    """What the machine asks about everything that is not plain data."""

    def resolve_global(self, module: str, name: str) -> Any:
        """A stand-in for ``module.name``, or raise (the read stops there)."""

    def persistent_load(self, pid: Any) -> Any:
        """The object a persistent id stands for (torch: a storage in the archive)."""

    def call(self, func: Any, args: tuple) -> Any:
        """``REDUCE``/``NEWOBJ``/``OBJ``/``INST``: what calling ``func`` gives, or raise."""

    def build(self, obj: Any, state: Any) -> Any:
        """``BUILD``: the object after ``state`` is applied, or raise."""


class PickleMachine:
    """Run the opcodes of one pickle in ``data[pos:]``; :meth:`run` returns (object, end offset)."""

    def __init__(
        self,
        data: Any,  # bytes or mmap: both have find() and slicing
        policy: Policy,
        max_objects: int = MAX_OBJECTS,
    ) -> None:
        self.data = data
        self.end = len(data)
        self.policy = policy
        self.budget = max_objects
        self.max_objects = max_objects

    # -- argument decoding ----------------------------------------------------------------
    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise PickleError("pickle ends in the middle of an argument (truncated or corrupt)")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b

    def _line(self) -> bytes:
        i = self.data.find(b"\n", self.pos)
        if i < 0:
            raise PickleError("pickle ends in the middle of a text argument (truncated or corrupt)")
        b = self.data[self.pos : i]
        self.pos = i + 1
        return b

    def _u(self, fmt: str, n: int) -> int:
        return struct.unpack(fmt, self._take(n))[0]

    def _count(self, n: int = 1) -> None:
        self.budget -= n
        if self.budget < 0:
            raise PickleError(
                f"pickle builds more than {self.max_objects:,} objects; not a tensor checkpoint"
            )

    # -- stack ----------------------------------------------------------------------------
    def _push(self, obj: Any) -> None:
        self._count()
        self.stack.append(obj)

    def _pop(self) -> Any:
        if not self.stack:
            raise PickleError("pickle pops from an empty stack (corrupt)")
        return self.stack.pop()

    def _pop_mark(self) -> list:
        if not self.metastack:
            raise PickleError("pickle closes a MARK it never opened (corrupt)")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _top(self) -> Any:
        if not self.stack:
            raise PickleError("pickle reads an empty stack (corrupt)")
        return self.stack[-1]

    # -- the loop -------------------------------------------------------------------------
    def run(self, pos: int = 0) -> tuple[Any, int]:
        """Interpret from ``pos`` to STOP. Raises PickleError, or whatever the callbacks raise."""
        self.pos = pos
        self.stack: list[Any] = []
        self.metastack: list[list[Any]] = []
        self.memo: dict[int, Any] = {}
        ops = _OPS
        data = self.data
        while True:
            if self.pos >= self.end:
                raise PickleError("pickle ends without a STOP opcode (truncated)")
            code = data[self.pos]
            self.pos += 1
            handler = ops.get(code)
            if handler is None:
                raise PickleError(f"unknown pickle opcode 0x{code:02x} at byte {self.pos - 1}")
            if handler is _stop:
                if self.metastack or len(self.stack) != 1:
                    raise PickleError("pickle stops with a malformed stack (corrupt)")
                return self.stack[0], self.pos
            try:
                handler(self)
            except (PickleError, CheckpointError):
                raise
            except RecursionError:
                raise PickleError("pickle nests objects too deeply") from None
            except (ValueError, TypeError, OverflowError, UnicodeDecodeError, KeyError) as e:
                raise PickleError(f"malformed pickle at byte {self.pos}: {_why(e)}") from None

    # -- helpers used by the handlers --------------------------------------------------------
    def _global(self, module: str, name: str) -> None:
        self._push(self.policy.resolve_global(module, name))

    def _call(self, func: Any, args: Any) -> Any:  # the policy checks args
        return self.policy.call(func, args)

    def _memo_get(self, key: int) -> None:
        if key not in self.memo:
            raise PickleError(f"pickle refers to memo entry {key}, which it never stored (corrupt)")
        self._push(self.memo[key])

    def _memo_put(self, key: int) -> None:
        if key < 0:
            raise PickleError("pickle stores a negative memo key (corrupt)")
        self.memo[key] = self._top()


def _why(e: BaseException) -> str:
    return str(e).split("\n")[0][:200] or type(e).__name__


# -- opcode handlers (one per opcode; the table below maps opcode bytes to them) -------------------
def _stop(m: PickleMachine) -> None:  # handled in run()
    raise AssertionError


def _proto(m: PickleMachine) -> None:
    if m._take(1)[0] > 5:
        raise PickleError("pickle protocol is newer than 5")


def _frame(m: PickleMachine) -> None:
    m._take(8)  # a hint for buffered readers; the opcodes follow inline


def _mark(m: PickleMachine) -> None:
    m.metastack.append(m.stack)
    m.stack = []


def _pop(m: PickleMachine) -> None:
    if m.stack:
        m.stack.pop()
    else:  # as pickle does: POP right after MARK drops the mark
        m._pop_mark()


def _pop_mark_discard(m: PickleMachine) -> None:
    m._pop_mark()


def _dup(m: PickleMachine) -> None:
    m._push(m._top())


def _none(m: PickleMachine) -> None:
    m._push(None)


def _true(m: PickleMachine) -> None:
    m._push(True)


def _false(m: PickleMachine) -> None:
    m._push(False)


def _int(m: PickleMachine) -> None:
    line = m._line()
    m._push(False if line == b"00" else True if line == b"01" else int(line))


def _binint(m: PickleMachine) -> None:
    m._push(m._u("<i", 4))


def _binint1(m: PickleMachine) -> None:
    m._push(m._take(1)[0])


def _binint2(m: PickleMachine) -> None:
    m._push(m._u("<H", 2))


def _long(m: PickleMachine) -> None:
    m._push(int(m._line().rstrip(b"L")))


def _long1(m: PickleMachine) -> None:
    m._push(int.from_bytes(m._take(m._take(1)[0]), "little", signed=True))


def _long4(m: PickleMachine) -> None:
    n = m._u("<i", 4)
    if n > 1 << 16:
        raise PickleError("pickle holds an integer of more than 500,000 bits")
    m._push(int.from_bytes(m._take(n), "little", signed=True))


def _float(m: PickleMachine) -> None:
    m._push(float(m._line()))


def _binfloat(m: PickleMachine) -> None:
    m._push(m._u(">d", 8))


def _string(m: PickleMachine) -> None:
    line = m._line()
    if len(line) < 2 or line[0] != line[-1] or line[:1] not in (b"'", b'"'):
        raise PickleError("pickle STRING argument is not quoted (corrupt)")
    m._push(codecs.escape_decode(line[1:-1])[0].decode("latin-1"))


def _binstring(m: PickleMachine) -> None:
    m._push(m._take(m._u("<i", 4)).decode("latin-1"))


def _short_binstring(m: PickleMachine) -> None:
    m._push(m._take(m._take(1)[0]).decode("latin-1"))


def _unicode(m: PickleMachine) -> None:
    m._push(m._line().decode("raw-unicode-escape"))


def _binunicode(m: PickleMachine) -> None:
    m._push(m._take(m._u("<I", 4)).decode("utf-8", "surrogatepass"))


def _short_binunicode(m: PickleMachine) -> None:
    m._push(m._take(m._take(1)[0]).decode("utf-8", "surrogatepass"))


def _binunicode8(m: PickleMachine) -> None:
    m._push(m._take(m._u("<Q", 8)).decode("utf-8", "surrogatepass"))


def _binbytes(m: PickleMachine) -> None:
    m._push(bytes(m._take(m._u("<I", 4))))


def _short_binbytes(m: PickleMachine) -> None:
    m._push(bytes(m._take(m._take(1)[0])))


def _binbytes8(m: PickleMachine) -> None:
    m._push(bytes(m._take(m._u("<Q", 8))))


def _bytearray8(m: PickleMachine) -> None:
    m._push(bytearray(m._take(m._u("<Q", 8))))


def _out_of_band(m: PickleMachine) -> None:
    raise PickleError("pickle uses out-of-band buffers, which a file cannot carry")


def _empty_list(m: PickleMachine) -> None:
    m._push([])


def _empty_tuple(m: PickleMachine) -> None:
    m._push(())


def _empty_dict(m: PickleMachine) -> None:
    m._push({})


def _empty_set(m: PickleMachine) -> None:
    m._push(set())


def _list(m: PickleMachine) -> None:
    m._push(m._pop_mark())


def _tuple(m: PickleMachine) -> None:
    m._push(tuple(m._pop_mark()))


def _tuple1(m: PickleMachine) -> None:
    m._push((m._pop(),))


def _tuple2(m: PickleMachine) -> None:
    b, a = m._pop(), m._pop()
    m._push((a, b))


def _tuple3(m: PickleMachine) -> None:
    c, b, a = m._pop(), m._pop(), m._pop()
    m._push((a, b, c))


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


def _pairs(items: list) -> dict:
    if len(items) % 2:
        raise PickleError("pickle builds a dict from an odd number of items (corrupt)")
    return {check_key(items[i]): items[i + 1] for i in range(0, len(items), 2)}


def _dict(m: PickleMachine) -> None:
    m._push(_pairs(m._pop_mark()))


def _frozenset(m: PickleMachine) -> None:
    m._push(frozenset(check_key(x) for x in m._pop_mark()))


def _target(m: PickleMachine, kind: type | tuple[type, ...]) -> Any:
    obj = m._top()
    if isinstance(obj, Opaque):
        return kind()  # a throwaway: the items go nowhere
    if not isinstance(obj, kind):
        raise PickleError(f"pickle adds items to a {type(obj).__name__} (corrupt or hostile)")
    return obj


def _append(m: PickleMachine) -> None:
    value = m._pop()
    _target(m, list).append(value)


def _appends(m: PickleMachine) -> None:
    items = m._pop_mark()
    _target(m, list).extend(items)


def _setitem(m: PickleMachine) -> None:
    value, key = m._pop(), m._pop()
    _target(m, dict)[check_key(key)] = value


def _setitems(m: PickleMachine) -> None:
    items = m._pop_mark()
    _target(m, dict).update(_pairs(items))


def _additems(m: PickleMachine) -> None:
    items = m._pop_mark()
    _target(m, set).update(check_key(x) for x in items)


def _get(m: PickleMachine) -> None:
    m._memo_get(int(m._line()))


def _binget(m: PickleMachine) -> None:
    m._memo_get(m._take(1)[0])


def _long_binget(m: PickleMachine) -> None:
    m._memo_get(m._u("<I", 4))


def _put(m: PickleMachine) -> None:
    m._memo_put(int(m._line()))


def _binput(m: PickleMachine) -> None:
    m._memo_put(m._take(1)[0])


def _long_binput(m: PickleMachine) -> None:
    m._memo_put(m._u("<I", 4))


def _memoize(m: PickleMachine) -> None:
    m._memo_put(len(m.memo))


def _global_op(m: PickleMachine) -> None:
    module = m._line().decode("utf-8", "replace")
    name = m._line().decode("utf-8", "replace")
    m._global(module, name)


def _stack_global(m: PickleMachine) -> None:
    name, module = m._pop(), m._pop()
    if not isinstance(module, str) or not isinstance(name, str):
        module = name = COMPUTED  # built at run time by calls: refused, whatever it would be
    m._global(module, name)


def _inst(m: PickleMachine) -> None:
    module = m._line().decode("utf-8", "replace")
    name = m._line().decode("utf-8", "replace")
    args = tuple(m._pop_mark())
    func = m.policy.resolve_global(module, name)
    m._push(m._call(func, args))


def _obj(m: PickleMachine) -> None:
    items = m._pop_mark()
    if not items:
        raise PickleError("pickle OBJ without a class (corrupt)")
    m._push(m._call(items[0], tuple(items[1:])))


def _reduce(m: PickleMachine) -> None:
    args, func = m._pop(), m._pop()
    m._push(m._call(func, args))


def _newobj(m: PickleMachine) -> None:
    args, cls = m._pop(), m._pop()
    m._push(m._call(cls, args))


def _newobj_ex(m: PickleMachine) -> None:
    kwargs, args, cls = m._pop(), m._pop(), m._pop()
    if kwargs:
        raise PickleError("pickle creates an object with keyword arguments (not a checkpoint)")
    m._push(m._call(cls, args))


def _build(m: PickleMachine) -> None:
    state = m._pop()
    obj = m._top()
    m.stack[-1] = m.policy.build(obj, state)


def _ext(n: int) -> Callable[[PickleMachine], None]:
    def handler(m: PickleMachine) -> None:
        code = int.from_bytes(m._take(n), "little")
        m._push(m.policy.resolve_global(EXTENSION, str(code)))

    return handler


def _persid(m: PickleMachine) -> None:
    m._push(m.policy.persistent_load(m._line().decode("ascii", "replace")))


def _binpersid(m: PickleMachine) -> None:
    m._push(m.policy.persistent_load(m._pop()))


_OPS: dict[int, Callable[[PickleMachine], None]] = {
    ord(k): v
    for k, v in {
        ".": _stop,
        "\x80": _proto,
        "\x95": _frame,
        "(": _mark,
        "0": _pop,
        "1": _pop_mark_discard,
        "2": _dup,
        "N": _none,
        "\x88": _true,
        "\x89": _false,
        "I": _int,
        "J": _binint,
        "K": _binint1,
        "M": _binint2,
        "L": _long,
        "\x8a": _long1,
        "\x8b": _long4,
        "F": _float,
        "G": _binfloat,
        "S": _string,
        "T": _binstring,
        "U": _short_binstring,
        "V": _unicode,
        "X": _binunicode,
        "\x8c": _short_binunicode,
        "\x8d": _binunicode8,
        "B": _binbytes,
        "C": _short_binbytes,
        "\x8e": _binbytes8,
        "\x96": _bytearray8,
        "\x97": _out_of_band,
        "\x98": _out_of_band,
        "]": _empty_list,
        ")": _empty_tuple,
        "}": _empty_dict,
        "\x8f": _empty_set,
        "l": _list,
        "t": _tuple,
        "\x85": _tuple1,
        "\x86": _tuple2,
        "\x87": _tuple3,
        "d": _dict,
        "\x91": _frozenset,
        "a": _append,
        "e": _appends,
        "s": _setitem,
        "u": _setitems,
        "\x90": _additems,
        "g": _get,
        "h": _binget,
        "j": _long_binget,
        "p": _put,
        "q": _binput,
        "r": _long_binput,
        "\x94": _memoize,
        "c": _global_op,
        "\x93": _stack_global,
        "i": _inst,
        "o": _obj,
        "R": _reduce,
        "\x81": _newobj,
        "\x92": _newobj_ex,
        "b": _build,
        "\x82": _ext(1),
        "\x83": _ext(2),
        "\x84": _ext(4),
        "P": _persid,
        "Q": _binpersid,
    }.items()
}
