"""Qt-free engine: header parsing, dtypes, mmap views, cast, stats, diff, shards, writer.

Nothing here may import PySide6, pyqtgraph or inspector.gui (enforced by import-linter).
"""
