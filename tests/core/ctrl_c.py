"""A Ctrl-C pressed while a method runs: for tests of clean-up that must not be cut short."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any


def ctrl_c_on_first_call(
    method: Callable[..., Any], *, after: bool = False
) -> tuple[Callable, list]:
    """``method`` sending SIGINT to this process on its first call (before it runs, or right
    after with ``after``); the handler runs at the next bytecode, inside the caller. The list
    records the press."""
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
