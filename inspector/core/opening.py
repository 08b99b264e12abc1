"""Open a checkpoint from what a person points at: a file, an index, or a folder.

Opening costs what the index names, never what its names merely suggest: shard series are
checked against one listing of the folder, and every per-shard check is a dict lookup.
"""

from __future__ import annotations

import os
import stat

from .checkpoint import Checkpoint
from .errors import AmbiguousCheckpointError, CheckpointError, path_problem
from .formats.burnpack import SUFFIX as BURNPACK_SUFFIX
from .formats.gguf import SUFFIX as GGUF_SUFFIX
from .formats.registry import read_file
from .gguf_split import split_series
from .index_file import SHARD_NAME, is_index_name, read_index
from .layout import Header, TensorInfo, file_identity
from .save.journal import leftover_journals
from .save.output_names import PICKLE_SUFFIXES
from .training_layout import model_tensors
from .wording import _clip, _json_type, _q

# the pickle a loader takes from a folder by name (transformers' WEIGHTS_NAME, diffusers'),
# whatever else Trainer.save_model or a training run left beside it
PICKLE_WEIGHT_NAMES = ("pytorch_model.bin", "diffusion_pytorch_model.bin")


def read_checkpoint_file(path: str, st: os.stat_result | None = None) -> Header:
    """One file's tensors: a safetensors header, or a PyTorch pickle read without executing it.

    The file's identity is taken before and after the read: one replaced or rewritten meanwhile
    is refused, and every later open of the path must find the identity recorded here.
    """
    before = file_identity(st) if st is not None else _identity(path)
    header = read_file(path)
    if before is None or _identity(path) != before:
        raise CheckpointError(path, "file changed on disk while it was being read; open it again")
    header.identity = before
    return header


def _identity(path: str) -> tuple[int, int, int, int] | None:
    try:
        return file_identity(os.stat(path))
    except OSError:
        return None


def open_checkpoint(path: str | os.PathLike[str], keep_all: bool = False) -> Checkpoint:
    """Open a ``.safetensors`` file, a ``*.safetensors.index.json``, or a folder holding either.

    A training checkpoint (Lightning, a training loop's ``{"model", "optimizer", ...}``, DDP's
    ``module.``) opens as its model's weights under the names the model expects, unless
    ``keep_all``: see :mod:`.training_layout`.
    """
    path = os.fspath(path)
    if not path:
        raise CheckpointError(None, "the path is empty")
    try:
        st = os.stat(path)
    except OSError as e:
        raise CheckpointError(path, path_problem(path, e)) from None
    if stat.S_ISDIR(st.st_mode):
        ckpt = _open_folder(path, keep_all)
        ckpt.folder = path
        return ckpt
    if path.endswith(".json"):
        return open_index(path)
    header = read_checkpoint_file(path, st)
    series = split_series(header, read_checkpoint_file)
    if series is not None:  # a GGUF split: every part, as one checkpoint
        return Checkpoint(series[0].path, series, [t for h in series for t in h.tensors])
    found = None if keep_all else model_tensors(header)
    if found is None:
        return Checkpoint(path, [header], list(header.tensors))
    header, layout = found
    return Checkpoint(path, [header], list(header.tensors), training=layout)


def _open_folder(folder: str, keep_all: bool = False) -> Checkpoint:
    try:
        names = sorted(os.listdir(folder))
    except OSError as e:
        raise CheckpointError(folder, f"cannot list folder: {path_problem(folder, e)}") from None
    indexes = [n for n in names if is_index_name(n) and not n.startswith(".")]
    if any(".safetensors.index" in n for n in indexes):  # as transformers: safetensors first
        indexes = [n for n in indexes if ".safetensors.index" in n]
    if len(indexes) == 1:
        return open_index(os.path.join(folder, indexes[0]))
    if len(indexes) > 1:
        raise AmbiguousCheckpointError(
            folder,
            f"holds {len(indexes)} index files ({', '.join(_clip(n, 80) for n in indexes)}); "
            "open one of them",
            [os.path.join(folder, n) for n in indexes],
        )
    files = _plain_files(folder, names, ".safetensors")
    if len(files) == 1:
        return open_checkpoint(os.path.join(folder, files[0]), keep_all)
    if not files:
        pickles = _plain_files(folder, names, PICKLE_SUFFIXES)
        weights = [n for n in pickles if n in PICKLE_WEIGHT_NAMES]
        if len(pickles) == 1 or len(weights) == 1:  # Trainer: + training_args.bin, optimizer.pt
            return open_checkpoint(os.path.join(folder, (weights or pickles)[0]), keep_all)
        if pickles:
            raise AmbiguousCheckpointError(
                folder,
                f"folder holds {len(pickles)} PyTorch pickle files but no index.json to join "
                "them; open one file",
                [os.path.join(folder, n) for n in pickles],
            )
        burnpacks = _plain_files(folder, names, BURNPACK_SUFFIX)
        if len(burnpacks) == 1:  # what burn saves: one .bpk
            return open_checkpoint(os.path.join(folder, burnpacks[0]), keep_all)
        ggufs = _plain_files(folder, names, GGUF_SUFFIX)
        firsts = [n for n in ggufs if "-00001-of-" in n]  # a split series opens from its first
        if not burnpacks and (len(ggufs) == 1 or (len(firsts) == 1 and _one_series(ggufs))):
            return open_checkpoint(os.path.join(folder, (firsts or ggufs)[0]), keep_all)
        burnpacks += ggufs
        if burnpacks:
            raise AmbiguousCheckpointError(
                folder,
                f"folder holds {len(burnpacks)} Burnpack or GGUF files; open one file",
                [os.path.join(folder, n) for n in burnpacks],
            )
        raise CheckpointError(
            folder,
            "folder holds no .safetensors file and no *.safetensors.index.json (nor a PyTorch "
            "pickle, a Burnpack .bpk or a .gguf)",
        )
    raise AmbiguousCheckpointError(
        folder,
        f"folder holds {len(files)} .safetensors files but no index.json to join them; open one file",
        [os.path.join(folder, n) for n in files],
    )


def _one_series(names: list[str]) -> bool:
    """Whether every name is a part of the same split series (``m-0000K-of-0000N.gguf``)."""
    return len({n.rsplit("-", 3)[0] for n in names}) == 1 and all("-of-" in n for n in names)


def _plain_files(folder: str, names: list[str], suffix: str | tuple[str, ...]) -> list[str]:
    """The visible regular files of ``names`` ending in ``suffix`` (one suffix or several)."""
    return [
        n
        for n in names
        if n.endswith(suffix) and not n.startswith(".") and os.path.isfile(os.path.join(folder, n))
    ]


def open_index(index_path: str) -> Checkpoint:
    """Open a sharded checkpoint; every shard and the index must agree tensor for tensor."""
    index_path = os.fspath(index_path)
    folder = os.path.dirname(os.path.abspath(index_path))
    # a read never finishes an interrupted save (the journal may be planted): it says so
    journals = leftover_journals(folder)
    try:
        ckpt = _open_index(index_path, folder)
    except CheckpointError as e:
        if journals:
            e.reason += f" ({interrupted_save_notice(journals)})"
        raise
    ckpt.notices.extend([interrupted_save_notice(journals)] if journals else [])
    return ckpt


def interrupted_save_notice(journals: list[str]) -> str:
    """What a read says of a save journal it found (and left alone)."""
    return (
        f"an interrupted save left {_clip(journals[0], 40)}"
        + (f" and {len(journals) - 1} more" if len(journals) > 1 else "")
        + " in this folder; the next cast into this folder finishes it"
    )


def _open_index(index_path: str, folder: str) -> Checkpoint:
    index = read_index(index_path)
    if "weight_map" not in index:
        raise CheckpointError(index_path, 'not a safetensors index: no "weight_map"')
    weight_map = index["weight_map"]
    if not isinstance(weight_map, dict):
        raise CheckpointError(
            index_path,
            f'"weight_map" must be an object of tensor name to shard file, got {_json_type(weight_map)}',
        )
    if not weight_map:
        raise CheckpointError(index_path, '"weight_map" is empty: the index names no tensors')
    by_shard: dict[str, list[str]] = {}
    for name, shard in weight_map.items():
        names = by_shard.get(shard) if isinstance(shard, str) else None
        if names is None:
            _check_shard_name(index_path, name, shard)
            names = by_shard[shard] = []
        names.append(name)
    shard_names = sorted(by_shard)
    _check_shard_series(index_path, folder, shard_names)
    files: list[Header] = []
    tensors: list[TensorInfo] = []
    for shard in shard_names:
        shard_path = os.path.join(folder, shard)
        try:
            st = os.stat(shard_path)
        except OSError as e:
            problem = path_problem(shard_path, e)
            if problem.startswith("no such file"):
                problem = "is missing"
            raise CheckpointError(
                index_path, f"shard {_q(shard)} named in the index {problem}"
            ) from None
        header = read_checkpoint_file(shard_path, st)
        files.append(header)
        present = set()
        for t in header.tensors:
            mapped = weight_map.get(t.name)
            if mapped is None:
                raise CheckpointError(
                    shard_path, f"tensor {_q(t.name)} is in this shard but not in the index"
                )
            if mapped != shard:
                raise CheckpointError(
                    shard_path,
                    f"tensor {_q(t.name)} is in this shard but the index puts it in {_q(mapped)}",
                )
            present.add(t.name)
            tensors.append(t)
        for name in by_shard[shard]:
            if name not in present:
                raise CheckpointError(
                    index_path,
                    f"tensor {_q(name)} is listed in the index but missing from shard {_q(shard)}",
                )
    meta = index.get("metadata")
    return Checkpoint(
        index_path,
        files,
        tensors,
        index_path=index_path,
        index_metadata=meta if isinstance(meta, dict) else None,
        index=index,
    )


def _check_shard_name(index_path: str, name: str, shard: object) -> None:
    if not isinstance(shard, str) or not shard:
        raise CheckpointError(index_path, f"weight_map entry for {_q(name)} is not a file name")
    if "\x00" in shard:
        raise CheckpointError(
            index_path, f"shard {_q(shard)} holds a NUL byte: no file has that name"
        )
    parts = shard.replace("\\", "/").split("/")
    if os.path.isabs(shard) or ".." in parts:
        raise CheckpointError(index_path, f"shard {_q(shard)} points outside the index's folder")
    if "" in parts or "." in parts:
        raise CheckpointError(index_path, f"shard {_q(shard)} is not a plain relative file name")


def _check_shard_series(index_path: str, folder: str, shard_names: list[str]) -> None:
    """A shard of the series (``model-00002-of-00004.safetensors``) that the index never names
    holds tensors the index forgot: every tensor of that file would silently go missing.

    Checked against one listing of the folder, so a name claiming 999,999 siblings costs nothing.
    """
    series = set()
    for shard in shard_names:
        m = SHARD_NAME.fullmatch(shard)
        if m and len(m.group(3)) <= 12:  # a shard in a subfolder never matches a listing
            series.add((m.group(1), len(m.group(2)), m.group(3), m.group(4)))
    if not series:
        return
    named = set(shard_names)
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in sorted(entries):
        m = SHARD_NAME.fullmatch(entry)
        if (
            m
            and entry not in named
            and (m.group(1), len(m.group(2)), m.group(3), m.group(4)) in series
            and 1 <= int(m.group(2)) <= int(m.group(3))
        ):
            raise CheckpointError(
                index_path,
                f"shard {_q(entry)} is in the folder but the index names none of its "
                "tensors (the index is incomplete)",
            )
