"""PyInstaller entry of `checkpoint-inspector-gui`: built windowed (no console on Windows/macOS)."""

import multiprocessing
import os
import sys

# A windowed executable has no console: sys.stdout/sys.stderr are None, and writing an error
# line (or a library warning) would raise. Send them to the null device instead.
for _name in ("stdout", "stderr"):
    if getattr(sys, _name) is None:
        setattr(sys, _name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115

from inspector.cli import gui_main  # noqa: E402

if __name__ == "__main__":
    # a large cast spawns worker processes: in the bundle each starts as this executable,
    # and this call turns it into the worker instead of a second app
    multiprocessing.freeze_support()
    sys.exit(gui_main())
