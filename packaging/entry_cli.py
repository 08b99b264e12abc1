"""PyInstaller entry of the `checkpoint-inspector` executable (CLI, and the window on Linux)."""

import multiprocessing
import sys

from inspector.cli import console_main

if __name__ == "__main__":
    # a large cast spawns worker processes: in the bundle each starts as this executable,
    # and this call turns it into the worker instead of a second app
    multiprocessing.freeze_support()
    sys.exit(console_main())
