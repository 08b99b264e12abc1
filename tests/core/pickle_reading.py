"""Reading a pickle with the interpreter, and comparing what it gives with the reference's
value: the opcode tests' common ground."""

from __future__ import annotations

import math
from typing import Any

from inspector.core.formats.torch_pickle.machine import PickleMachine
from inspector.core.formats.torch_pickle.policies import LoadPolicy


def run(data: bytes, policy: Any = None, **kw: Any) -> Any:
    obj, end = PickleMachine(data, policy or LoadPolicy(), **kw).run(0)
    assert end == len(data)
    return obj


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types, all the way down (1 == True == 1.0 would hide a wrong op)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b
