"""A Ctrl-C pressed while a method runs: for tests of clean-up that must not be cut short."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def sigint_raises() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt in this process while the block runs, as in an interactive
    shell. A run started in the background by a non-interactive shell (``make mutate &``) inherits
    SIGINT ignored, and the press would then be lost; the previous disposition is put back after."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def ctrl_c_on_first_call(
    method: Callable[..., Any], *, after: bool = False
) -> tuple[Callable, list]:
    """``method`` sending SIGINT to this process on its first call (before it runs, or right
    after with ``after``); the handler runs at the next bytecode, inside the caller. The list
    records the press. Call it inside ``sigint_raises()``."""
    pressed: list[int] = []

    def pressing(self, *args, **kwargs):
        if not after:
            _press(pressed)
        result = method(self, *args, **kwargs)
        if after:
            _press(pressed)
        return result

    return pressing, pressed


def _press(pressed: list[int]) -> None:
    if not pressed:
        pressed.append(1)
        os.kill(os.getpid(), signal.SIGINT)
