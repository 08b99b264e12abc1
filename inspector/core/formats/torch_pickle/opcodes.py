"""One handler per pickle opcode, and the table that maps opcode bytes to them. A handler only
moves values between the machine's stack, memo and marks, or asks the machine's policy: it never
imports, calls or builds anything of its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .opcodes_data import (  # the handlers that push a value read from their argument
    _binbytes,
    _binbytes8,
    _binfloat,
    _binint,
    _binint1,
    _binint2,
    _binstring,
    _binunicode,
    _binunicode8,
    _bytearray8,
    _float,
    _int,
    _long,
    _long1,
    _long4,
    _out_of_band,
    _short_binbytes,
    _short_binstring,
    _short_binunicode,
    _string,
    _unicode,
)
from .text_numbers import read_memo_key
from .unknown import Unknown, UnreadTensor
from .values import COMPUTED, EXTENSION, Opaque, PickleError, check_key

if TYPE_CHECKING:
    from .machine_state import PickleState


def stop(m: PickleState) -> None:  # handled in PickleState.run
    raise AssertionError


def _proto(m: PickleState) -> None:
    if m._take(1)[0] > 5:
        raise PickleError("protocol is newer than 5")


def _frame(m: PickleState) -> None:
    """The opcodes follow inline, but CPython's unpickler reads the whole frame from the file
    first: a frame that ends anywhere but where its opcodes end makes torch.load start its next
    pickle (a legacy checkpoint has five) somewhere else than a reader that follows opcodes."""
    n = m._u("<Q", 8)
    m.begin_frame(n)


def _mark(m: PickleState) -> None:
    m.metastack.append(m.stack)
    m.stack = []


def _pop(m: PickleState) -> None:
    if m.stack:
        m.stack.pop()
    else:  # as pickle does: POP right after MARK drops the mark
        m._pop_mark()


def _pop_mark_discard(m: PickleState) -> None:
    m._pop_mark()


def _dup(m: PickleState) -> None:
    m._push(m._top())


def _const(value: object) -> Callable[[PickleState], None]:
    """NONE, NEWTRUE, NEWFALSE, EMPTY_TUPLE: push one immutable value."""
    return lambda m: m._push(value)


_EXTRA = {set: 3, dict: 1, list: 0}  # an empty set is 216 bytes, a dict 64, a list 56


def _new(kind: type) -> Callable[[PickleState], None]:
    """EMPTY_LIST, EMPTY_DICT, EMPTY_SET: push a new empty container (charged by its size)."""
    extra = _EXTRA[kind]

    def push(m: PickleState) -> None:
        m._count(extra)
        m._push(kind())

    return push


def _list(m: PickleState) -> None:
    m._push(m._pop_mark())


def _tuple(m: PickleState) -> None:
    m._push(tuple(m._pop_mark()))


def _tuple1(m: PickleState) -> None:
    m._push((m._pop(),))


def _tuple2(m: PickleState) -> None:
    b, a = m._pop(), m._pop()
    m._push((a, b))


def _tuple3(m: PickleState) -> None:
    c, b, a = m._pop(), m._pop(), m._pop()
    m._push((a, b, c))


def _pairs(items: list) -> dict:
    if len(items) % 2:
        raise PickleError("builds a dict from an odd number of items (corrupt)")
    return {check_key(items[i]): items[i + 1] for i in range(0, len(items), 2)}


def _dict(m: PickleState) -> None:
    m._push(_pairs(m._pop_mark()))


def _frozenset(m: PickleState) -> None:
    m._count(3)
    m._push(frozenset(check_key(x) for x in m._pop_mark()))


def _target(m: PickleState, kind: type) -> object:
    obj = m._top()
    if isinstance(obj, (Opaque, UnreadTensor)):
        return kind()  # a throwaway: the items go nowhere
    if isinstance(obj, Unknown):  # a dict or list subclass: its items are kept, as data
        return obj.items_of(kind)
    if not isinstance(obj, kind):
        raise PickleError(f"adds items to a {type(obj).__name__} (corrupt or hostile)")
    return obj


def _append(m: PickleState) -> None:
    value = m._pop()
    _target(m, list).append(value)


def _appends(m: PickleState) -> None:
    items = m._pop_mark()
    _target(m, list).extend(items)


def _setitem(m: PickleState) -> None:
    value, key = m._pop(), m._pop()
    _target(m, dict)[check_key(key)] = value


def _setitems(m: PickleState) -> None:
    items = m._pop_mark()
    _target(m, dict).update(_pairs(items))


def _additems(m: PickleState) -> None:
    items = m._pop_mark()
    _target(m, set).update(check_key(x) for x in items)


def _get(m: PickleState) -> None:
    m._memo_get(read_memo_key(m._line()))


def _binget(m: PickleState) -> None:
    m._memo_get(m._take(1)[0])


def _long_binget(m: PickleState) -> None:
    m._memo_get(m._u("<I", 4))


def _put(m: PickleState) -> None:
    m._memo_put(read_memo_key(m._line()))


def _binput(m: PickleState) -> None:
    m._memo_put(m._take(1)[0])


def _long_binput(m: PickleState) -> None:
    m._memo_put(m._u("<I", 4))


def _memoize(m: PickleState) -> None:
    m._memo_put(len(m.memo))


def _global_op(m: PickleState) -> None:
    module = m._line().decode("utf-8", "replace")
    name = m._line().decode("utf-8", "replace")
    m._global(module, name)


def _stack_global(m: PickleState) -> None:
    name, module = m._pop(), m._pop()
    if not isinstance(module, str) or not isinstance(name, str):
        module = name = COMPUTED  # built at run time by calls: refused, whatever it would be
    m._global(module, name)


def _inst(m: PickleState) -> None:
    module = m._line().decode("utf-8", "replace")
    name = m._line().decode("utf-8", "replace")
    args = tuple(m._pop_mark())
    func = m.policy.resolve_global(module, name)
    m._push(m._call(func, args))


def _obj(m: PickleState) -> None:
    items = m._pop_mark()
    if not items:
        raise PickleError("OBJ without a class (corrupt)")
    m._push(m._call(items[0], tuple(items[1:])))


def _reduce(m: PickleState) -> None:
    args, func = m._pop(), m._pop()
    m._push(m._call(func, args))


def _newobj(m: PickleState) -> None:
    args, cls = m._pop(), m._pop()
    m._push(m._call(cls, _new_args(cls, args)))


def _newobj_ex(m: PickleState) -> None:
    kwargs, args, cls = m._pop(), m._pop(), m._pop()
    if kwargs:
        raise PickleError("creates an object with keyword arguments (not a checkpoint)")
    m._push(m._call(cls, _new_args(cls, args)))


def _new_args(cls: object, args: object) -> object:
    """``cls.__new__(cls, *args)``: a set, OrderedDict, Counter or bytearray comes out empty
    whatever the arguments (torch.load gives it so; filling it could show tensors it never
    gives); the arguments are still checked to be a tuple."""
    if getattr(cls, "new_ignores_args", False) and isinstance(args, tuple):
        return ()
    return args


def _build(m: PickleState) -> None:
    state = m._pop()
    obj = m._top()
    m.stack[-1] = m.policy.build(obj, state)


def _ext(n: int) -> Callable[[PickleState], None]:
    def handler(m: PickleState) -> None:
        code = int.from_bytes(m._take(n), "little")
        m._push(m.policy.resolve_global(EXTENSION, str(code)))

    return handler


def _persid(m: PickleState) -> None:
    m._push(m.policy.persistent_load(m._line().decode("ascii", "replace")))


def _binpersid(m: PickleState) -> None:
    m._push(m.policy.persistent_load(m._pop()))


OPS: dict[int, Callable[[PickleState], None]] = {
    ord(k): v
    for k, v in {
        ".": stop,
        "\x80": _proto,
        "\x95": _frame,
        "(": _mark,
        "0": _pop,
        "1": _pop_mark_discard,
        "2": _dup,
        "N": _const(None),
        "\x88": _const(True),
        "\x89": _const(False),
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
        "]": _new(list),
        ")": _const(()),
        "}": _new(dict),
        "\x8f": _new(set),
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
