"""A helper process ends when the process that started it dies, however that died.

A cast worker waits for its next task on a queue whose write end it holds itself (a
multiprocessing queue is pickled to the child whole), so after a ``kill -9`` of the program
(the OOM killer, a closed terminal, a session ending) no EOF ever came: the workers stayed,
reparented to init, holding the source and the ``.partial`` open and the terminal's pipe, for
good. Every child that multiprocessing spawns holds the read end of a pipe whose write end only
its parent holds (``multiprocessing.parent_process().sentinel``): it becomes ready when the
parent is gone, on every platform. A daemon thread waits on it and ends the process.
"""

from __future__ import annotations

import os
import threading

EXIT_PARENT_GONE = 75  # EX_TEMPFAIL: nobody reads it (the parent is gone), but a trace says why


def exit_when_parent_dies() -> bool:
    """Start the watch (once per process); False when this process has no multiprocessing
    parent to watch (it was not started by multiprocessing)."""
    import multiprocessing
    from multiprocessing.connection import wait

    parent = multiprocessing.parent_process()
    if parent is None or getattr(exit_when_parent_dies, "started", False):
        return parent is not None

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(EXIT_PARENT_GONE)  # no cleanup to run: the parent owned every file we wrote

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    exit_when_parent_dies.started = True  # type: ignore[attr-defined]
    return True
