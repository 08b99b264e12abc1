"""Turn the object a pickle built into named tensors and named values.

Names are the keys a walk over ``torch.load(...)`` meets, joined with dots
(``state_dict.model.fc.weight``, ``layers.0``). Tensors become :class:`TensorInfo` whose offsets are
absolute in the file; a view that is not contiguous becomes a :class:`StridedTensorInfo`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ...layout import StridedTensorInfo, TensorInfo
from .allowlist import LeftOutTensor, StorageRef, TensorRecord
from .archive import StorageSpan
from .machine import PickleError
from .records import INT_LIMIT
from .unknown import Unknown, UnreadTensor
from .values import bounded_repr

MAX_DEPTH = 1000
# a strided view may repeat its stored values (stride 0), but not into sizes no model has:
# refused past 1 GiB of logical values and 1024 times the bytes it stores
_BROADCAST_FLOOR = 1 << 30
_BROADCAST_RATIO = 1024
_VISIT_FLOOR = 1_000_000
ROOT_TENSOR_NAME = "tensor"  # torch.save(tensor): the file holds one tensor and no key


@dataclass
class NamedValue:
    """A leaf that is not a tensor (an epoch, a learning rate, a string): listed, never written."""

    name: str
    text: str
    left_out: bool = False  # a tensor torch loads that safetensors cannot hold (complex128)
    unread: bool = False  # a tensor whose rebuild needs an unknown object: never read


def flatten(root: object) -> tuple[list[tuple[str, TensorRecord]], list[NamedValue]]:
    """Tensors and other leaves in walk order; nesting deeper than MAX_DEPTH or a cycle is refused.

    An unknown object (a placeholder) is one value; inside it only tensors are looked for, under
    the names of its arguments, items and attributes, each placeholder once (its own parent may
    be among its attributes: omegaconf's nodes name their container), and not past MAX_DEPTH."""
    if isinstance(root, TensorRecord):
        return [(ROOT_TENSOR_NAME, root)], []
    if isinstance(root, (LeftOutTensor, UnreadTensor)):
        unread = isinstance(root, UnreadTensor)
        return [], [NamedValue(ROOT_TENSOR_NAME, root.text(), left_out=True, unread=unread)]
    tensors: list[tuple[str, TensorRecord]] = []
    values: list[NamedValue] = []
    on_path: set[int] = set()
    # a container reached again by another path is walked again (torch's state_dict walk gives
    # both names), but a file of a few hundred bytes can share lists 2**40 ways: the walk may
    # visit at most a few times the distinct containers it met
    seen: set[int] = set()
    visits = distinct = 0
    # an explicit stack: the walk must not depend on Python's recursion limit; ``inside``: under
    # a placeholder, where plain values are its own business and are not listed
    stack: list[tuple[str, object, int, bool, bool]] = [("", root, 0, False, False)]
    while stack:
        name, obj, depth, leaving, inside = stack.pop()
        if leaving:
            on_path.discard(id(obj))
            continue
        if isinstance(obj, TensorRecord):
            tensors.append((name, obj))
            continue
        if isinstance(obj, Unknown):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if not inside:
                values.append(NamedValue(name, _value_text(obj)))
            items, inside = obj.children(), True
        else:
            items = _children(obj)
        if items is None or (not items and name):
            if not inside or isinstance(obj, (LeftOutTensor, UnreadTensor)):
                unread = isinstance(obj, UnreadTensor)
                values.append(NamedValue(name, _value_text(obj), _is_tensor(obj), unread))
            continue
        if inside and (depth >= MAX_DEPTH or id(obj) in on_path):
            continue  # a placeholder's state may point back at its container, or nest on
        if depth >= MAX_DEPTH:
            raise PickleError(f"nests containers more than {MAX_DEPTH} levels deep")
        if id(obj) in on_path:
            raise PickleError(f"contains itself (a cycle at {name or 'the top level'})")
        on_path.add(id(obj))
        if isinstance(obj, Unknown):  # what it holds may be shared by many: each part once
            for part in obj.parts():
                if id(part) not in seen:
                    seen.add(id(part))
                    distinct += len(part)
            distinct += 1  # a state that is not a dict: one child
        elif id(obj) not in seen:
            seen.add(id(obj))
            distinct += len(items)
        visits += len(items)
        if visits > _VISIT_FLOOR + 8 * distinct:
            raise PickleError(
                "shares the same containers under so many names that listing them would not end"
            )
        stack.append((name, obj, depth, True, inside))
        for key, child in reversed(items):
            stack.append((f"{name}.{key}" if name else key, child, depth + 1, False, inside))
    return tensors, values


def _is_tensor(obj: object) -> bool:
    return isinstance(obj, (LeftOutTensor, UnreadTensor))


def _children(obj: object) -> list[tuple[str, object]] | None:
    if isinstance(obj, dict):
        return [(_key_text(k), v) for k, v in obj.items()]
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj)]
    return None


def _key_text(key: object) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, tuple):  # a tuple key is its items ("(1, 2)"), not an empty container
        return _clipped(bounded_repr(key, 120), 120)
    if isinstance(key, Unknown):  # an object hashed by identity: "<omegaconf.…>"
        return _clipped(repr(key), 120)
    return _value_text(key)


def _value_text(value: object, limit: int = 120) -> str:
    if isinstance(value, str):
        text = repr(value[:limit])
    elif value is None or isinstance(value, (bool, int, float, complex)):
        text = repr(value) if not (type(value) is int and abs(value) > 10**40) else "a huge integer"
    elif isinstance(value, (bytes, bytearray)):
        text = f"{len(value):,} bytes"
    elif isinstance(value, (set, frozenset)):
        text = f"a set of {len(value):,}"
    elif isinstance(value, (dict, list, tuple)):
        text = "{}" if isinstance(value, dict) else "[]" if isinstance(value, list) else "()"
    elif isinstance(value, (LeftOutTensor, UnreadTensor, Unknown)):
        text = value.text()
    elif isinstance(value, StorageRef):
        text = "a storage without a tensor"
    else:
        text = type(value).__name__
    return _clipped(text, limit)


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def place_tensor(
    path: str, name: str, rec: TensorRecord, locate: Callable[[str], StorageSpan]
) -> TensorInfo:
    """Where the tensor's bytes are in the file, checked to lie inside its storage."""
    span = locate(rec.storage.key)
    if span.offset < 0:
        raise PickleError(
            f"tensor {bounded_repr(name, 80)}: its storage is compressed in the zip, which torch never writes"
        )
    item = rec.dtype.bits // 8
    numel = math.prod(rec.shape)  # at most 64 dimensions below 2**63 each (records.py)
    if numel * item >= INT_LIMIT:
        raise PickleError(f"tensor {bounded_repr(name, 80)} has 2**63 bytes of values or more")
    start = span.offset + rec.offset * item
    stored = rec.storage.numel * (rec.storage.dtype.bits // 8 if rec.storage.dtype else 1)
    if span.nbytes != stored:  # torch checks the record's size against the pickle's exactly
        raise PickleError(
            f"tensor {bounded_repr(name, 80)}: its storage holds {span.nbytes:,} bytes where the "
            f"pickle declares {stored:,}; torch refuses such a file"
        )
    if numel == 0:
        return TensorInfo(rec.dtype.name, rec.shape, (start, start), name, path)
    last = rec.offset + sum((n - 1) * s for n, s in zip(rec.shape, rec.stride, strict=True))
    if (last + 1) * item > stored:
        raise PickleError(
            f"tensor {bounded_repr(name, 80)} reaches past the end of its storage ({(last + 1) * item:,} > {stored:,} bytes)"
        )
    end = start + numel * item
    span_bytes = (last - rec.offset + 1) * item
    if numel * item > max(_BROADCAST_FLOOR, _BROADCAST_RATIO * span_bytes):
        # a view repeating a few stored values (stride 0) over a logical size no model has:
        # every reader that touches its values (stats, cast) would run for hours
        raise PickleError(
            f"tensor {bounded_repr(name, 80)} is a view of {numel * item:,} bytes over "
            f"{span_bytes:,} stored bytes (stride 0); not read"
        )
    if _is_contiguous(rec.shape, rec.stride):
        return TensorInfo(rec.dtype.name, rec.shape, (start, end), name, path)
    return StridedTensorInfo(
        rec.dtype.name,
        rec.shape,
        (start, end),
        name,
        path,
        strides=rec.stride,
        span_elems=last - rec.offset + 1,
    )


def _is_contiguous(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    want = 1
    for n, s in zip(reversed(shape), reversed(stride), strict=True):
        if n != 1 and s != want:
            return False
        want *= n
    return True
