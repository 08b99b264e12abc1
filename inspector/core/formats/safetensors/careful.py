"""The careful parser: stdlib JSON with serde's judgement (repeated keys, depth, numbers),
wording every refusal. It takes what the fast path does not accept."""

from __future__ import annotations

import json
import re
from typing import Any

from ...dtypes import DTYPES, DType
from ...errors import CheckpointError
from ...layout import _U64_MAX, Header, TensorInfo
from ...wording import _clip, _dump, _json_type, _q
from .json_numbers import overflows
from .layout import validate_layout
from .name import FORMAT_NAME

_NEG_ZERO_INT = re.compile(r"-0(?![0-9.eE])")
# every digit as "9": a run of 20 means an integer that may not fit a u64 (a regex search for
# [0-9]{20} costs 0.2 s on a 22 MB header, this 0.03 s)
_DIGITS_AS_NINES = str.maketrans("012345678", "999999999")
_FIELDS = frozenset(("dtype", "shape", "data_offsets"))
_MAX_DEPTH = 127  # serde_json's recursion limit, as the reference loader meets it


class _NeedRepeats(Exception):
    """The fast parse met something whose meaning depends on repeated JSON keys."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in JSON")


class _OutOfRange(ValueError):
    """A number serde refuses: its (approximate) float value is infinite."""


def _parse_float(s: str) -> float:
    if overflows(s):  # serde's approximate parse, not Python's correctly rounded one
        raise _OutOfRange(s)
    return float(s)


def _parse_int(s: str) -> int | float:
    """Integers as serde reads them: beyond u64 they become (approximate) floats, which may be out
    of range; ``-0`` is a float to serde (so not a valid dimension), an int to Python."""
    if s.startswith("-") and s.strip("-0") == "":
        return float(s)
    if len(s) >= 20 and overflows(s):
        raise _OutOfRange(s)
    return int(s)


def _parse_json(
    text: str, track_repeats: bool
) -> tuple[Any, dict[int, tuple[Any, set[str], list[tuple[str, Any]]]] | None]:
    """Parse like serde would; with ``track_repeats``, also return, per dict id, the keys it repeated.

    serde rejects a repeated struct field (``dtype`` twice in one tensor, ``__metadata__`` twice)
    but lets a repeated map key win last, so repeats are recorded and judged by where they are.
    Each recorded dict is kept alive in the table so its id cannot be reused by another dict.
    Tracking costs a Python call per object, so the caller first parses without it and comes back
    only when the text could hold a repeated field.
    """
    kwargs: dict[str, Any] = {"parse_constant": _reject_constant, "parse_float": _parse_float}
    repeats: dict[int, tuple[Any, set[str], list[tuple[str, Any]]]] | None = None
    if track_repeats:
        repeats = {}
        table = repeats

        def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            d = dict(pairs)
            if len(d) != len(pairs):
                seen: set[str] = set()
                rep: set[str] = set()
                for k, _ in pairs:
                    if k in seen:
                        rep.add(k)
                    seen.add(k)
                # values a later repeat replaced: serde still parsed (and judged) them
                dropped = [(k, v) for k, v in pairs if k in rep and d[k] is not v]
                table[id(d)] = (d, rep, dropped)
            return d

        kwargs["object_pairs_hook"] = hook
    long_int = "9" * 20 in text.translate(_DIGITS_AS_NINES)
    if long_int or ("-0" in text and _NEG_ZERO_INT.search(text)):
        kwargs["parse_int"] = _parse_int  # a Python call per integer: only when it can matter
    obj = json.loads(text, **kwargs)
    dropped = [v for _, _, gone in (repeats or {}).values() for _, v in gone]
    if "\\u" in text and (_has_lone_surrogate(obj) or _has_lone_surrogate(dropped)):
        raise ValueError("a \\u escape encodes a lone surrogate, which is not valid UTF-8")
    return obj, repeats


def _could_repeat_fields(text: str, obj: dict[str, Any]) -> bool:
    """True unless the text provably repeats no key anywhere.

    Every key of every object is followed by one colon; colons inside strings are counted from
    the parsed strings. A text with more colons than that repeated a key, whose earlier value
    Python's dict dropped without judging it. A backslash-u escape can hide a colon or spell a
    key, so it takes the exact path too.
    """
    if "\\u" in text:
        return True
    expected = 0
    stack: list[Any] = [obj]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is dict:
            expected += len(x)
            for k, v in x.items():
                if ":" in k:
                    expected += k.count(":")
                stack.append(v)
        elif t is list:
            stack.extend(x)
        elif t is str and ":" in x:
            expected += x.count(":")
    return text.count(":") != expected


def _has_lone_surrogate(obj: Any) -> bool:
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            try:
                x.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return False


def _extra_field_problem(value: Any) -> str | None:
    """What serde would reject in a tensor's unknown field (it parses and then ignores it).

    The value sits at nesting depth 3 (file object, tensor object, value); serde gives up past
    depth 127, and numbers it turns into f64 must stay finite.
    """
    stack = [(value, 3)]
    while stack:
        x, depth = stack.pop()
        t = type(x)
        if t is dict or t is list:
            if depth > _MAX_DEPTH:
                return f"nested more than {_MAX_DEPTH} levels deep"
            stack.extend((v, depth + 1) for v in (x.values() if t is dict else x))
    return None


def parse_header_text(path: str, text: str, *, data_start: int, file_size: int) -> Header:
    """Validate decoded header JSON against a file of ``file_size`` bytes."""
    obj, _ = _load(path, text, track_repeats=False)
    if type(obj) is not dict or not _could_repeat_fields(text, obj):
        try:
            return _build(path, obj, None, data_start, file_size)
        except _NeedRepeats:
            pass
    obj, repeats = _load(path, text, track_repeats=True)
    return _build(path, obj, repeats or {}, data_start, file_size)


def _load(
    path: str, text: str, *, track_repeats: bool
) -> tuple[Any, dict[int, tuple[Any, set[str], list[tuple[str, Any]]]] | None]:
    try:
        return _parse_json(text, track_repeats)
    except RecursionError:
        raise CheckpointError(path, "header JSON is nested too deeply") from None
    except _OutOfRange as e:
        raise CheckpointError(
            path, f"header holds a number too large for a 64-bit float: {_clip(str(e), 40)}"
        ) from None
    except ValueError as e:
        # (an integer too long for Python's int() overflows serde first: _OutOfRange)
        if isinstance(e, json.JSONDecodeError):
            msg = f"{e.msg.removesuffix(' at')} at character {e.pos}"
        else:
            msg = str(e)
        raise CheckpointError(path, f"header is not valid JSON ({msg})") from None


def _build(
    path: str,
    obj: Any,
    repeats: dict[int, tuple[Any, set[str], list[tuple[str, Any]]]] | None,
    data_start: int,
    file_size: int,
) -> Header:
    if type(obj) is not dict:
        raise CheckpointError(
            path, f"header JSON must be an object of tensors, got {_json_type(obj)}"
        )
    if repeats and "__metadata__" in repeats.get(id(obj), ((), (), ()))[1]:
        raise CheckpointError(path, "header JSON has __metadata__ twice")
    metadata = obj.pop("__metadata__", None)
    if metadata is not None:
        if type(metadata) is not dict:
            raise CheckpointError(path, "__metadata__ must be an object of string to string")
        for k, v in metadata.items():
            if type(v) is not str:
                raise CheckpointError(
                    path, f"__metadata__ value for {_q(k)} must be a string, got {_json_type(v)}"
                )

    # a repeated tensor name keeps its last entry, but serde judged the earlier ones first
    # (a repeated __metadata__ was refused above, so every dropped entry is a tensor's)
    for name, info in repeats.get(id(obj), ((), (), ()))[2] if repeats else ():
        _tensor_entry(path, name, info, repeats)
    tensors = [_tensor_entry(path, name, info, repeats) for name, info in obj.items()]
    validate_layout(path, tensors, data_len=file_size - data_start)
    return Header(path, tensors, metadata, data_start, file_size, FORMAT_NAME)


def _tensor_entry(
    path: str,
    name: str,
    info: Any,
    repeats: dict[int, tuple[Any, set[str], list[tuple[str, Any]]]] | None,
) -> TensorInfo:
    """One validated tensor entry, or the reason it is refused."""
    ti = type(info)
    if ti is dict:
        if repeats and id(info) in repeats:
            field = sorted(repeats[id(info)][1] & _FIELDS)
            if field:
                raise CheckpointError(path, f"tensor {_q(name)}: field {field[0]!r} appears twice")
        try:
            dtype_name = info["dtype"]
            shape = info["shape"]
            offsets = info["data_offsets"]
        except KeyError as e:
            raise CheckpointError(path, f"tensor {_q(name)}: missing field {e.args[0]!r}") from None
        if len(info) != 3:
            for key, value in info.items():
                if key not in _FIELDS:
                    problem = _extra_field_problem(value)
                    if problem:
                        raise CheckpointError(
                            path, f"tensor {_q(name)}: extra field {_q(key)} {problem}"
                        )
    elif ti is list and len(info) == 3:
        # serde also reads a struct from a JSON array of its fields, in declaration order
        dtype_name, shape, offsets = info
    else:
        what = f"a list of {len(info)} items" if ti is list else _json_type(info)
        raise CheckpointError(
            path,
            f"tensor {_q(name)}: entry must be an object with dtype, shape and data_offsets, got {what}",
        )
    dtype = DTYPES.get(dtype_name) if type(dtype_name) is str else None
    if dtype is None:
        dtype = _dtype_from_map(path, name, dtype_name, repeats)
    if type(shape) is not list:
        _bad_shape(path, name, shape)
    for d in shape:
        if type(d) is not int or d < 0 or d > _U64_MAX:
            _bad_shape(path, name, shape)
    if type(offsets) is not list or len(offsets) != 2:
        _bad_offsets_field(path, name, offsets)
    start, end = offsets
    if (
        type(start) is not int
        or type(end) is not int
        or start < 0
        or end < 0
        or start > _U64_MAX
        or end > _U64_MAX
    ):
        _bad_offsets_field(path, name, offsets)
    return TensorInfo(
        dtype_name=dtype.name,
        shape=tuple(shape),
        data_offsets=(start, end),
        name=name,
        file=path,
    )


def _dtype_from_map(
    path: str,
    name: str,
    value: Any,
    repeats: dict[int, tuple[Any, set[str], list[tuple[str, Any]]]] | None,
) -> DType:
    """serde also reads a unit enum variant from a one-entry map, ``{"F32": null}``."""
    if type(value) is dict and len(value) == 1:
        if repeats is None:
            raise _NeedRepeats  # {"F32": null, "F32": null} collapses to one entry in Python
        ((key, inner),) = value.items()
        if inner is None and key in DTYPES and id(value) not in repeats:
            return DTYPES[key]
    hint = ""
    if isinstance(value, str) and value.upper() in DTYPES:
        hint = f" (dtype names are upper case: {value.upper()})"
    raise CheckpointError(path, f"tensor {_q(name)}: unknown dtype {_dump(value)}{hint}")


def _bad_shape(path: str, name: str, shape: Any) -> None:
    raise CheckpointError(
        path,
        f"tensor {_q(name)}: shape must be a list of non-negative integers, got {_dump(shape)}",
    )


def _bad_offsets_field(path: str, name: str, offsets: Any) -> None:
    raise CheckpointError(
        path,
        f"tensor {_q(name)}: data_offsets must be exactly two non-negative integers, got {_dump(offsets)}",
    )
