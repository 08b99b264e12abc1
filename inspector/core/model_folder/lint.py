"""``lint``: is a model folder consistent? Each finding has a severity, one line, and the tensors
and files it concerns. Problems people shipped: an index that forgot tensors, a stray
``model.safetensors`` beside shards, a ``.bin`` twin doubling a download, tied weights saved twice,
keys doubled by a buggy save (``*_blocks_blocks``), F32 weights under a bfloat16 config."""

from __future__ import annotations

import hashlib
import json
import os
import re
import statistics
from collections import defaultdict

import numpy as np

from ..errors import AmbiguousCheckpointError, CheckpointError
from ..index_file import MAX_INDEX_BYTES, SHARD_NAME, is_index_name
from ..layout import TensorInfo
from ..opening import open_checkpoint, read_checkpoint_file
from ..regular_file import open_regular
from ..wording import format_bytes
from .companions import WEIGHT_SUFFIXES
from .config import ModelConfig, model_folder, read_model_config
from .findings import Finding, Severity, finding
from .intended import is_intended, preset_globs
from .lint_pickles import lint_other_pickles, lint_weight_pickles
from .lint_quant import lint_quant, lint_quant_values, quant_layout_of

# a prefix joined twice ends a name's component (``encoder_blocks_blocks.0``); a doubled word
# inside one (ALBERT's real ``full_layer_layer_norm``) is a name a model may well have
_DOUBLED = re.compile(r"(_[A-Za-z][A-Za-z0-9]{2,})\1(?=\.|$)")
_PROBE = 64 << 10  # bytes hashed from each end before a full comparison


def lint_path(path: str, stats: bool = False) -> list[Finding]:
    """Every finding for the folder holding ``path`` (or ``path`` itself when a folder)."""
    folder = model_folder(path)
    findings: list[Finding] = []
    try:
        config = read_model_config(path)
    except CheckpointError as e:
        findings.append(Finding(Severity.ERROR, "config_invalid", e.reason, files=["config.json"]))
        config = None
    names = sorted(n for n in os.listdir(folder) if not n.startswith("."))
    indexes = [n for n in names if is_index_name(n)]
    used: set[str] = set()
    for index in indexes:
        used |= _lint_index(folder, index, findings)
    _lint_strays(folder, names, indexes, used, findings)
    try:
        ckpts = [open_checkpoint(path)]  # what a loader would read
    except AmbiguousCheckpointError as e:  # variants side by side: each is linted
        ckpts = [open_checkpoint(p) for p in e.choices]
    except CheckpointError as e:
        if not findings:
            raise  # nothing to say but that it is unreadable: exit 2
        findings.append(Finding(Severity.ERROR, "does_not_open", e.reason))
        return findings
    for ckpt in ckpts:
        with ckpt:
            for notice in ckpt.notices:  # left alone by the read: a half-written folder
                findings.append(Finding(Severity.WARNING, "interrupted_save", notice))
            findings.extend(lint_weight_pickles(folder, ckpt))
            tensors = ckpt.tensors
            _lint_names(tensors, findings)
            _lint_duplicates(ckpt, findings)
            quant = quant_layout_of(config, tensors)
            findings.extend(lint_quant(quant, config, tensors))
            if (
                config is not None and len(ckpts) == 1
            ):  # a variant differs from the config on purpose
                stored = quant.part_of if quant is not None else {}  # quantized on purpose
                _lint_config_dtype(config, [t for t in tensors if t.name not in stored], findings)
            if stats:
                _lint_values(ckpt, findings)
                findings.extend(lint_quant_values(ckpt, quant))
    _lint_shard_sizes(folder, sorted(used), findings)
    weights = {os.path.realpath(h.path) for ckpt in ckpts for h in ckpt.files}
    findings.extend(lint_other_pickles(folder, names, weights))
    return findings


def _rel(folder: str, path: str) -> str:
    return os.path.relpath(path, folder)


def _lint_index(folder: str, index: str, findings: list[Finding]) -> set[str]:
    """Index against its shards: tensors missing either way, total_size. Returns the shards used."""
    try:
        with open_regular(os.path.join(folder, index)) as f:  # a FIFO is refused, not waited on
            obj = json.loads(f.read(MAX_INDEX_BYTES + 1))  # one past the cap: no longer JSON
        weight_map = obj["weight_map"]
        assert isinstance(weight_map, dict)
    except (
        OSError,
        CheckpointError,
        ValueError,
        KeyError,
        TypeError,
        AssertionError,
        RecursionError,
    ):
        findings.append(
            finding(Severity.ERROR, "index_invalid", "index_invalid", files=[index], index=index)
        )
        return set()
    by_shard: dict[str, set[str]] = defaultdict(set)
    for name, shard in weight_map.items():
        if isinstance(shard, str):
            by_shard[shard].add(name)
    total = 0
    for shard, listed in sorted(by_shard.items()):
        path = os.path.join(folder, shard)
        if not os.path.isfile(path):
            findings.append(
                finding(
                    Severity.ERROR,
                    "shard_missing",
                    "shard_missing",
                    sorted(listed)[:20],
                    [index, shard],
                    index=index,
                    shard=shard,
                )
            )
            continue
        try:
            header = read_checkpoint_file(path)
        except CheckpointError as e:
            findings.append(
                Finding(Severity.ERROR, "shard_unreadable", f"{shard}: {e.reason}", files=[shard])
            )
            continue
        stored = {t.name for t in header.tensors}
        total += sum(t.nbytes for t in header.tensors)
        extra, missing = sorted(stored - listed), sorted(listed - stored)
        if extra:
            where = {n: weight_map.get(n) for n in extra}
            elsewhere = [n for n in extra if where[n] is not None]
            findings.append(
                finding(
                    Severity.ERROR,
                    "tensor_not_in_index",
                    "tensor_elsewhere_in_index" if elsewhere else "tensor_not_in_index",
                    extra[:20],
                    [index, shard],
                    index=index,
                    shard=shard,
                    n=len(extra),
                    m=len(elsewhere),
                )
            )
        if missing:
            findings.append(
                finding(
                    Severity.ERROR,
                    "index_names_missing_tensor",
                    "index_names_missing_tensor",
                    missing[:20],
                    [index, shard],
                    index=index,
                    shard=shard,
                    n=len(missing),
                )
            )
    meta = obj.get("metadata")
    claimed = meta.get("total_size") if isinstance(meta, dict) else None
    if isinstance(claimed, int) and claimed != total and total:
        findings.append(
            finding(
                Severity.WARNING,
                "total_size",
                "total_size",
                files=[index],
                index=index,
                claimed=claimed,
                total=total,
            )
        )
    return set(by_shard)


def _lint_strays(
    folder: str, names: list[str], indexes: list[str], used: set[str], findings: list[Finding]
) -> None:
    weights = [
        n
        for n in names
        if n.lower().endswith(WEIGHT_SUFFIXES) and os.path.isfile(os.path.join(folder, n))
    ]
    st_weights = [n for n in weights if n.endswith(".safetensors")]
    if indexes:
        for n in weights:
            if n in used:
                continue
            twin = n.endswith((".bin", ".pt", ".pth")) and st_weights
            findings.append(
                finding(
                    Severity.WARNING,
                    "pickle_twin" if twin else "stray_weights",
                    "stray_pickle_twin" if twin else "stray_weights",
                    files=[n],
                    name=n,
                )
            )
    elif len(st_weights) == 1:
        for n in weights:
            if n.endswith((".bin", ".pt", ".pth")):
                findings.append(
                    finding(
                        Severity.WARNING,
                        "pickle_twin",
                        "pickle_twin",
                        files=[n, st_weights[0]],
                        name=n,
                        weights=st_weights[0],
                    )
                )


def _lint_names(tensors: list[TensorInfo], findings: list[Finding]) -> None:
    doubled = [(t.name, m) for t in tensors if (m := _DOUBLED.search(t.name))]
    if doubled:
        findings.append(
            finding(
                Severity.WARNING,
                "doubled_key",
                "doubled_key",
                [name for name, _ in doubled[:20]],
                n=len(doubled),
                part=doubled[0][1].group(0),
            )
        )


def _digest(ckpt, t: TensorInfo, full: bool) -> bytes:
    """blake2b of the tensor's bytes (its first 64 KiB only, as a cheap probe, unless ``full``)."""
    h = hashlib.blake2b(digest_size=16)
    for chunk in ckpt.iter_chunks(t, _PROBE if not full else 8 << 20):
        h.update(np.ascontiguousarray(chunk))  # its bytes, whatever the dtype
        if not full:
            break
    return h.digest()


def _lint_duplicates(ckpt, findings: list[Finding]) -> None:
    """Identical bytes under two names: tied weights saved twice (cheap probe, then full hash)."""
    groups: dict[tuple, list[TensorInfo]] = defaultdict(list)
    for t in ckpt.tensors:
        if t.nbytes >= 1024:  # small constants (zeros, ones) repeat legitimately
            groups[(t.dtype_name, tuple(t.shape))].append(t)
    for same in groups.values():
        if len(same) < 2:
            continue
        probe: dict[bytes, list[TensorInfo]] = defaultdict(list)
        for t in same:
            probe[_digest(ckpt, t, full=False)].append(t)
        for candidates in probe.values():
            if len(candidates) < 2:
                continue
            full: dict[bytes, list[TensorInfo]] = defaultdict(list)
            for t in candidates:
                full[_digest(ckpt, t, full=True)].append(t)
            for dup in full.values():
                # tied tensors of a pickle share one storage: stored once, nothing wasted
                copies = {(t.file, ckpt.byte_range(t)): t for t in dup}
                if len(copies) > 1:
                    wasted = sum(t.nbytes for t in list(copies.values())[1:])
                    findings.append(
                        finding(
                            Severity.INFO,
                            "duplicate_tensor",
                            "duplicate_tensor",
                            [t.name for t in dup],
                            n=len(dup),
                            wasted=wasted,
                        )
                    )


def _lint_config_dtype(
    config: ModelConfig, tensors: list[TensorInfo], findings: list[Finding]
) -> None:
    if config.dtype is None:
        return
    globs = preset_globs("fp32-norms", config.modules_to_not_convert)
    floats = [t for t in tensors if t.dtype.is_float]
    off = [t for t in floats if t.dtype.name != config.dtype.name and not is_intended(t, globs)]
    if off:
        kinds = sorted({t.dtype.name for t in off})
        findings.append(
            finding(
                Severity.WARNING,
                "config_dtype",
                "config_dtype",
                [t.name for t in off],
                ["config.json"],
                config=config.describe(),
                n=len(off),
                floats=len(floats),
                kinds="/".join(kinds),
                dtype=config.dtype.name,
            )
        )


def _lint_values(ckpt, findings: list[Finding]) -> None:
    from ..progress import run_job
    from ..stats import compute_stats

    stats = run_job(compute_stats(ckpt))
    bad = [n for n, s in stats.items() if s.nan or s.inf]
    if bad:
        findings.append(finding(Severity.WARNING, "nan_inf", "nan_inf", bad[:20], n=len(bad)))


def _lint_shard_sizes(folder: str, shards: list[str], findings: list[Finding]) -> None:
    series = [s for s in shards if SHARD_NAME.fullmatch(os.path.basename(s))]
    if len(series) < 3:
        return
    sizes = {
        s: os.path.getsize(os.path.join(folder, s))
        for s in series
        if os.path.isfile(os.path.join(folder, s))
    }
    body = [sizes[s] for s in series[:-1] if s in sizes]  # the last shard is the remainder
    if len(body) < 2:
        return
    mid = statistics.median(body)
    odd = [s for s in series[:-1] if s in sizes and (sizes[s] > 2 * mid or sizes[s] < mid / 4)]
    if odd:
        findings.append(
            finding(
                Severity.INFO,
                "odd_shard_size",
                "odd_shard_size",
                files=odd,
                n=len(odd),
                size=format_bytes(int(mid)),
            )
        )
