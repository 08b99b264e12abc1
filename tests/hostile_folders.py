"""A downloaded model folder that tries to make a *read* write: journals of an interrupted save
(planted as a download would ship them, and forged as our own writer leaves them), temps named
like ours, a symlink to a folder outside, a hard link to a file outside. Plus the snapshot that
proves nothing changed: inode, size, mtime, ctime, mode and links of every entry, symlink targets.

Built from bytes: no torch needed (the evil pickle only names ``os.system``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from inspector.core.dtypes import DTYPES
from inspector.core.save.writer import save_arrays

HEX = "0123456789ab"
F32 = DTYPES["F32"]


def evil_pickle(canary: Path) -> bytes:
    """``os.system("touch canary")`` by GLOBAL + REDUCE: what ``torch.load`` of it would run."""
    cmd = f"touch {canary}".encode()
    return b"\x80\x02cos\nsystem\n\x8c" + bytes([len(cmd)]) + cmd + b"\x85R."


def build(root: Path, canary: Path, *, forged: bool) -> tuple[Path, Path]:
    """``root/model`` (the folder a person opens) and ``root/outside`` (what it must not touch).

    ``forged``: the journals look exactly like our writer's (mode 0600, this folder's identity),
    as a same-user attacker could make them; otherwise as a download ships them (0644, no id).
    """
    folder, outside = root / "model", root / "outside"
    folder.mkdir(parents=True)
    outside.mkdir()
    (outside / ".bashrc").write_text("echo the user's own shell setup\n")
    (outside / "secret.bin").write_bytes(b"outside data")
    weight_map = {}
    for i in (1, 2):
        shard = f"model-0000{i}-of-00002.safetensors"
        save_arrays(folder / shard, [(f"layer{i}.w", F32, np.full(8, i, dtype=np.float32))])
        weight_map[f"layer{i}.w"] = shard
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    (folder / "config.json").write_text(json.dumps({"torch_dtype": "float32"}))
    (folder / "cfg").symlink_to(outside, target_is_directory=True)
    os.link(outside / "secret.bin", folder / "linked.bin.txt")
    bashrc = folder / f"..bashrc.{HEX}.partial"
    bashrc.write_text(f"touch {canary}  # appended by the attacker\n")
    (folder / f".pytorch_model.bin.{HEX}.partial").write_bytes(evil_pickle(canary))
    (folder / f".model-00001-of-00002.safetensors.{HEX}.partial").write_bytes(b"garbage")
    st = os.stat(folder)
    journal = {
        "renames": [
            [bashrc.name, "cfg/.bashrc"],
            [f".pytorch_model.bin.{HEX}.partial", "pytorch_model.bin"],
            [
                f".model-00001-of-00002.safetensors.{HEX}.partial",
                "model-00001-of-00002.safetensors",
            ],
        ],
        "backups": [],
    }
    if forged:
        journal = {"folder": [st.st_dev, st.st_ino], **journal}
    for name in (f".{'a' * 12}.txn", f".{'b' * 12}.txn"):
        path = folder / name
        path.write_text(json.dumps(journal))
        path.chmod(0o600 if forged else 0o644)
    (folder / f".{'c' * 12}.txn").write_text("")  # a save that died before its journal
    return folder, outside


def snapshot(*roots: Path) -> dict[str, tuple]:
    """Every entry under ``roots`` (symlinks not followed) with what any write would change."""
    seen: dict[str, tuple] = {}
    for root in roots:
        seen[str(root)] = _entry(root)
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            for name in dirnames + filenames:
                path = os.path.join(dirpath, name)
                seen[path] = _entry(Path(path))
    return seen


def _entry(path: Path) -> tuple:
    st = os.lstat(path)
    link = os.readlink(path) if os.path.islink(path) else None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode, st.st_nlink, link)
