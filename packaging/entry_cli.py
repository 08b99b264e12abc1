"""PyInstaller entry of the `checkpoint-inspector` executable (CLI, and the window on Linux)."""

import sys

from inspector.cli import main

if __name__ == "__main__":
    sys.exit(main())
