"""A backup of a file a multi-file commit is about to replace, so a failed rename can put the
old file back: a hard link where the file system has them (instant, no space), else a copy
(FAT and exFAT drives, or no ``os.link``): slower, but the old set still comes back."""

from __future__ import annotations

import contextlib
import os
import shutil

from .facilities import allowed


def keep_backup(path: str, backup: str) -> bool:
    """Make ``backup`` hold what ``path`` holds now; False if neither a link nor a copy could
    be made (the disk is full): that file cannot be put back if the commit fails."""
    if allowed("link") and hasattr(os, "link"):
        try:
            os.link(path, backup)
            return True
        except OSError:
            pass  # no hard links on this file system: copy
    try:
        shutil.copyfile(path, backup)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(backup)
        return False
    return True
