"""Open a file a person named, for reading, as every reader here does: never blocking on a FIFO,
refusing folders, devices and sockets with one clear line."""

from __future__ import annotations

import os
import stat
from typing import Any

from .errors import CheckpointError, path_problem


def open_regular(path: str) -> Any:
    """Open ``path`` for reading without blocking on a FIFO; refuse anything but a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except IsADirectoryError:
        raise CheckpointError(path, "is a folder, not a .safetensors file") from None
    except FileNotFoundError as e:
        problem = path_problem(path, e)
        raise CheckpointError(
            path, "no such file" if problem == "no such file or folder" else problem
        ) from None
    except OSError as e:
        problem = path_problem(path, e)
        if problem == "is a socket, not a file":
            problem = "is a socket, not a .safetensors file"
        elif not problem.startswith(("is ", "permission")):
            problem = f"cannot open: {problem}"
        raise CheckpointError(path, problem) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise CheckpointError(path, "is a folder, not a .safetensors file")
        if not stat.S_ISREG(st.st_mode):
            kind = (
                "a named pipe (FIFO)"
                if stat.S_ISFIFO(st.st_mode)
                else "a device"
                if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a socket"
                if stat.S_ISSOCK(st.st_mode)
                else "not a regular file"
            )
            raise CheckpointError(path, f"is {kind}, not a .safetensors file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
