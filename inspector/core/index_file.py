"""The index of a sharded checkpoint (``*.safetensors.index.json``, ``pytorch_model.bin.index.json``):
its names and its JSON, read with the limits every reader of it shares (opening, lint, scan).
"""

from __future__ import annotations

import json
import re

from .errors import CheckpointError, path_problem
from .json_output import with_depth_room
from .regular_file import open_regular
from .wording import _json_type

INDEX_SUFFIX = ".safetensors.index.json"
# transformers/diffusers variants: model.safetensors.index.fp16.json; pickles: pytorch_model.bin.index.json
_INDEX_NAME = re.compile(r".+\.(safetensors|bin)\.index(\.[^./\\]+)?\.json")
SHARD_NAME = re.compile(r"(.*)-(\d+)-of-(\d+)\.(safetensors|bin)")
MAX_INDEX_BYTES = 100_000_000


def is_index_name(name: str) -> bool:
    """``*.safetensors.index.json``, a variant ``*.safetensors.index.<variant>.json``, or the same
    for pickle shards (``pytorch_model.bin.index.json``)."""
    return _INDEX_NAME.fullmatch(name) is not None


def read_index(index_path: str) -> dict:
    with open_regular(index_path) as f:  # refuses a FIFO or device instead of blocking on it
        try:
            raw = f.read(MAX_INDEX_BYTES + 1)
        except OSError as e:
            raise CheckpointError(
                index_path, f"cannot read: {path_problem(index_path, e)}"
            ) from None
    if len(raw) > MAX_INDEX_BYTES:
        raise CheckpointError(index_path, "index file is over 100 MB; not a safetensors index")
    if not raw.strip():
        raise CheckpointError(index_path, "index file is empty")
    try:
        index = _decode_json(raw)
    except UnicodeDecodeError as e:
        raise CheckpointError(
            index_path, f"index is not valid UTF-8 (bad byte at offset {e.start})"
        ) from None
    except json.JSONDecodeError as e:
        raise CheckpointError(
            index_path, f"index is not valid JSON ({e.msg} at character {e.pos})"
        ) from None
    except (ValueError, RecursionError):
        raise CheckpointError(
            index_path, "index is not valid JSON (nested too deeply or a number too long)"
        ) from None
    if not isinstance(index, dict):
        raise CheckpointError(
            index_path, f"not a safetensors index: the JSON is {_json_type(index)}, not an object"
        )
    return index


def _decode_json(raw: bytes) -> object:
    """msgspec first: its depth limit does not depend on how deep the caller's stack already is
    (the stdlib's does, so the same index could open in ``list`` and fail in ``cast``). What it
    refuses (NaN, huge integers) gets the stdlib's more lenient judgement, as transformers uses.
    """
    import msgspec

    try:
        return with_depth_room(msgspec.json.decode, raw)
    except msgspec.DecodeError:
        return with_depth_room(json.loads, raw.decode("utf-8"))
