"""An index in a scanned folder sends loaders to the files it names.

transformers joins each ``weight_map`` entry to the index's own folder (``../x`` and absolute
names included) and loads whatever is there, unpickling a ``.bin``. A scan vouches for a folder
only when every file its indexes name resolves inside it; anything else is a finding, not
followed (what is outside can change after the scan).
"""

from __future__ import annotations

import os

from ..errors import CheckpointError
from ..index_file import read_index
from ..wording import _clip, _q


def index_findings(path: str, real_root: str) -> list[str]:
    """What the index at ``path`` names outside ``real_root`` (a resolved folder), as one finding."""
    try:
        index = read_index(path)
    except CheckpointError:
        return []  # not an index (or unreadable): a loader would refuse it too
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, dict):
        return []
    folder = os.path.dirname(os.path.abspath(path))
    outside: list[tuple[str, str]] = []
    for shard in sorted({s for s in weight_map.values() if isinstance(s, str) and s}):
        try:
            target = os.path.realpath(os.path.join(folder, shard))
        except ValueError:  # a NUL in the name: no loader can open it
            continue
        if os.path.commonpath([real_root, target]) != real_root:
            outside.append((shard, target))
    if not outside:
        return []
    shard, target = outside[0]
    more = f" and {len(outside) - 1} more" if len(outside) > 1 else ""
    return [
        f"its weight_map names {_q(_clip(shard, 80))} ({_clip(target, 80)}){more}, outside the "
        "scanned folder: a loader would read it from there; not scanned"
    ]
