"""Checkpoint file formats as plug-ins: one sub-package per container, none importing another.

Each format offers one :class:`~.protocol.FileFormat` (``plugin.py``): whether a file is its
own (by name and first bytes), how to read it header-only into a format-neutral
:class:`~inspector.core.layout.Header` (its own facts in ``Header.facts``), and whether a file
another format read is also its own in a way its loader would act on (a polyglot).
:mod:`.registry` asks them in turn; nothing outside a format's folder imports its modules,
only what its ``__init__`` exports. How to add a format: docs/architecture.md.
"""
