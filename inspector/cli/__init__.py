"""The command line: ``checkpoint-inspector list|check|cast|diff|scan|lint`` and the window.

``dispatch`` parses and dispatches (``parser``), one module per command (``cmd_*``), what they
print and how (``output``, ``exit_codes``), the config.json and target rule they share
(``model``), and how Ctrl-C/SIGTERM end a run (``signals``).
"""

from .dispatch import console_main, gui_main, main

__all__ = ["console_main", "gui_main", "main"]
