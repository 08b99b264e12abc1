"""The state of the pickle machine and the primitives its opcode handlers use: taking
arguments inside or outside a FRAME, the stack, the memo, and the object budget (see
:mod:`.machine`). Separate from the loop so the handlers depend on this, not on the machine."""

from __future__ import annotations

import struct
from typing import Any, Protocol

from .values import MAX_OBJECTS, AmbiguousPickle, PickleError


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


class PickleState:
    """The machine's state and the primitives the opcode handlers use (``opcodes``,
    ``opcodes_data``); :class:`~.machine.PickleMachine` adds the loop that dispatches them."""

    pos: int
    frame_end: int  # the end of the open FRAME (0: none is open)
    stack: list[Any]
    metastack: list[list[Any]]
    memo: dict[int, Any]

    def __init__(
        self,
        data: Any,  # bytes or mmap: both have find() and slicing
        policy: Policy,
        max_objects: int = MAX_OBJECTS,
    ) -> None:
        self.data = data
        self.end = len(data)
        self.policy = policy
        self.max_objects = min(max_objects, len(data) * 3 // 4 + 1_000_000)
        self.budget = self.max_objects

    # -- argument decoding ----------------------------------------------------------------
    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise PickleError("ends in the middle of an argument (truncated or corrupt)")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b

    def _take_framed(self, n: int) -> bytes:
        """``_take`` while a FRAME is open: an argument may end at the frame's end, never cross
        it (CPython refuses that: "pickle exhausted before end of frame")."""
        if self.pos < self.frame_end < self.pos + n:
            raise AmbiguousPickle("has an argument that crosses the end of its FRAME")
        if self.pos + n >= self.frame_end:
            self._close_frame()
        return PickleState._take(self, n)

    def _line_framed(self) -> bytes:
        i = self.data.find(b"\n", self.pos)
        if self.pos < self.frame_end <= i:
            raise AmbiguousPickle("has a text argument that crosses the end of its FRAME")
        if i + 1 >= self.frame_end:
            self._close_frame()
        return PickleState._line(self)

    def begin_frame(self, n: int) -> None:
        """FRAME: the next ``n`` bytes are one frame, which must hold whole opcodes."""
        if self.frame_end > self.pos:
            raise AmbiguousPickle("begins a FRAME before the end of the current one")
        if n > self.end - self.pos:
            raise PickleError("declares a FRAME longer than the file (truncated or corrupt)")
        self.frame_end = self.pos + n
        self._take, self._line = self._take_framed, self._line_framed  # type: ignore[method-assign]

    def _close_frame(self) -> None:
        self.__dict__.pop("_take", None)
        self.__dict__.pop("_line", None)

    def _line(self) -> bytes:
        i = self.data.find(b"\n", self.pos)
        if i < 0:
            raise PickleError("ends in the middle of a text argument (truncated or corrupt)")
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
            raise PickleError("pops from an empty stack (corrupt)")
        return self.stack.pop()

    def _pop_mark(self) -> list:
        if not self.metastack:
            raise PickleError("closes a MARK it never opened (corrupt)")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _top(self) -> Any:
        if not self.stack:
            raise PickleError("reads an empty stack (corrupt)")
        return self.stack[-1]

    # -- helpers used by the handlers --------------------------------------------------------
    def _global(self, module: str, name: str) -> None:
        self._push(self.policy.resolve_global(module, name))

    def _call(self, func: Any, args: Any) -> Any:  # the policy checks args
        result = self.policy.call(func, args)
        if isinstance(result, (bytes, bytearray, str)):
            self._count(len(result) // 64)  # a copy the input did not pay for
        return result

    def _memo_get(self, key: int) -> None:
        if key not in self.memo:
            raise PickleError(f"refers to memo entry {key}, which it never stored (corrupt)")
        self._push(self.memo[key])

    def _memo_put(self, key: int) -> None:
        if key < 0:
            raise PickleError("stores a negative memo key (corrupt)")
        self._count(2)  # an entry of the memo dict: an int key and a slot
        self.memo[key] = self._top()
