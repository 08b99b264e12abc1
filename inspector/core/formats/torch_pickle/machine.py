"""A pickle interpreter that never executes: opcodes are decoded and applied by this code alone.

``pickle.load`` resolves every ``GLOBAL`` by importing a module and calls whatever it finds; that is
how a checkpoint runs ``os.system``. Here a global is only a *name*, handed to ``resolve_global``,
which returns one of our own stand-ins (see :mod:`.allowlist`) or refuses. Calls (``REDUCE``,
``NEWOBJ``, ``OBJ``, ``INST``), ``BUILD`` and persistent ids only ever reach those stand-ins.

Work and memory are bounded, by a budget of "objects" proportional to the input (at most
``max_objects``), charged before anything is kept: every push is one, a memo entry two, a set
four, a dict two, and a call's bytes result (``bytearray(b)`` copies ``b``) one per 64 bytes.
One object costs at most ~60 bytes of memory, so a file of n bytes holds at most ~45·n + 60 MB
of Python objects however it is written (a legitimate state dict uses a third to a half of its
budget). A string or bytes argument cannot be longer than what is left of the buffer.
"""

from __future__ import annotations

import struct
from typing import Any, Protocol

from ...errors import CheckpointError
from .opcodes import OPS, stop
from .values import (  # re-exported: the reader, policies and tests import them from here
    COMPUTED,
    EXTENSION,
    MAX_OBJECTS,
    AmbiguousPickle,
    Opaque,
    PickleError,
    check_key,
)

__all__ = [
    "COMPUTED",
    "EXTENSION",
    "MAX_OBJECTS",
    "AmbiguousPickle",
    "Opaque",
    "PickleError",
    "PickleMachine",
    "Policy",
    "check_key",
]


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
        return PickleMachine._take(self, n)

    def _line_framed(self) -> bytes:
        i = self.data.find(b"\n", self.pos)
        if self.pos < self.frame_end <= i:
            raise AmbiguousPickle("has a text argument that crosses the end of its FRAME")
        if i + 1 >= self.frame_end:
            self._close_frame()
        return PickleMachine._line(self)

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

    # -- the loop -------------------------------------------------------------------------
    def run(self, pos: int = 0) -> tuple[Any, int]:
        """Interpret from ``pos`` to STOP. Raises PickleError, or whatever the callbacks raise."""
        self.pos = pos
        self.frame_end = 0  # the end of the open FRAME (0: none is open)
        self._close_frame()
        self.stack: list[Any] = []
        self.metastack: list[list[Any]] = []
        self.memo: dict[int, Any] = {}
        ops = OPS
        data = self.data
        while True:
            if self.pos >= self.end:
                raise PickleError("ends without a STOP opcode (truncated)")
            code = data[self.pos]
            self.pos += 1
            handler = ops.get(code)
            if handler is None:
                raise PickleError(f"uses an unknown opcode 0x{code:02x} at byte {self.pos - 1}")
            if handler is stop:
                if self.metastack or len(self.stack) != 1:
                    raise PickleError("stops with a malformed stack (corrupt)")
                if self.pos < self.frame_end:
                    raise AmbiguousPickle(
                        f"stops {self.frame_end - self.pos:,} bytes before the end of its "
                        "FRAME: torch.load would read what follows from another place"
                    )
                return self.stack[0], self.pos
            try:
                handler(self)
            except (PickleError, CheckpointError):
                raise
            except RecursionError:
                raise PickleError("nests objects too deeply") from None
            except (ValueError, TypeError, OverflowError, UnicodeDecodeError, KeyError) as e:
                raise PickleError(f"is malformed at byte {self.pos}: {_why(e)}") from None

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


def _why(e: BaseException) -> str:
    return str(e).split("\n")[0][:200] or type(e).__name__
