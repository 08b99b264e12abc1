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

from typing import Any

from ...errors import CheckpointError
from .machine_state import PickleState, Policy
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


class PickleMachine(PickleState):
    """Run the opcodes of one pickle in ``data[pos:]``; :meth:`run` returns (object, end offset)."""

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


def _why(e: BaseException) -> str:
    return str(e).split("\n")[0][:200] or type(e).__name__
