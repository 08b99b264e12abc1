"""Names and path forms Windows refuses or changes, judged before a save reads a byte.

Windows will not create ``CON``, ``NUL``, ``COM1`` … (with any extension), names holding
``<>:"|?*`` or control characters, or names ending in a dot or a space (it silently drops
those, so ``model.`` would be written as ``model``). A save refuses them up front with one line
instead of failing half-way through its shards. The rules are plain functions of the path, so
they are tested on every system; they are applied where the program runs on Windows.

Paths may start with a drive (``C:\\``), a UNC share (``\\\\server\\share\\``) or the long-path
prefix (``\\\\?\\C:\\`` or ``\\\\?\\UNC\\server\\share\\``): only what follows is judged, and
:func:`long_path` adds that prefix to paths past Windows' 260-character limit.
"""

from __future__ import annotations

import re
import sys

_RESERVED = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{dev}{n}" for dev in ("COM", "LPT") for n in (*"123456789", "¹", "²", "³")}
)
_BAD_CHARS = frozenset('<>:"|?*') | {chr(c) for c in range(32)}
_ROOT = re.compile(
    r"""^(?:
        \\\\[?.]\\UNC\\[^\\/]+\\[^\\/]+   # \\?\UNC\server\share
      | \\\\[?.]\\[A-Za-z]:                # \\?\C:
      | \\\\[?.]\\                          # \\?\ (anything else)
      | \\\\[^\\/?.][^\\/]*\\[^\\/]+        # \\server\share
      | [A-Za-z]:                            # C:
    )""",
    re.VERBOSE,
)
MAX_PATH = 260


def windows_rules() -> bool:
    """Are output names judged by Windows' rules here? (A function, so tests can say yes.)"""
    return sys.platform == "win32"


def split_root(path: str) -> tuple[str, str]:
    """``(root, rest)``: the drive, share or long-path prefix, and the components after it."""
    m = _ROOT.match(path)
    return (m.group(0), path[m.end() :]) if m else ("", path)


def windows_problem(path: str) -> str | None:
    """Why Windows would refuse (or rename) ``path``, in words; None if it is fine there."""
    for part in re.split(r"[\\/]", split_root(path)[1]):
        if part in ("", ".", ".."):
            continue
        bad = sorted(set(part) & _BAD_CHARS)
        if bad:
            shown = " ".join(repr(c) if c.isprintable() else f"\\x{ord(c):02x}" for c in bad)
            return f"the name {part!r} holds {shown}, which Windows does not allow in a name"
        if part[-1] in ". ":
            end = "dot" if part[-1] == "." else "space"
            return f"the name {part!r} ends in a {end}, which Windows drops from a name"
        device = part.split(".")[0].rstrip(" ").upper()
        if device in _RESERVED:
            return f"the name {part!r} is the device {device} on Windows; choose another name"
    return None


def output_name_problem(path: str) -> str | None:
    """:func:`windows_problem` where Windows' rules apply, else None."""
    return windows_problem(path) if windows_rules() else None


def long_path(path: str) -> str:
    """``path`` as Windows opens it past :data:`MAX_PATH` characters: ``\\\\?\\`` before an
    absolute path (``\\\\?\\UNC\\`` for a share); a short, relative or prefixed path unchanged."""
    if len(path) < MAX_PATH or path.startswith("\\\\?\\"):
        return path
    if path.startswith("\\\\"):
        return "\\\\?\\UNC\\" + path[2:]
    if re.match(r"^[A-Za-z]:[\\/]", path):
        return "\\\\?\\" + path.replace("/", "\\")
    return path
