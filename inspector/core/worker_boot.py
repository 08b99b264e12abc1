"""What a process does before it imports numpy: the cast workers, and the program itself.

numpy's OpenBLAS starts one thread per extra core when it loads, and those threads spin for a
while before they sleep. In a two-core F32→F8_E4M3 cast they took 6% of all CPU samples from the
casts, in the main process and each worker (perf record, docs/benchmarks.md). Nothing here
multiplies matrices, so numpy is loaded with one BLAS thread. This module imports no numpy: a
worker unpickles :func:`boot_worker` (and so imports this module) before anything else.
"""

from __future__ import annotations

import os
import signal

BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"


def single_threaded_blas() -> None:
    """Load numpy (if not loaded yet) with one BLAS thread; an explicit setting is kept."""
    os.environ.setdefault(BLAS_THREADS_ENV, "1")


def boot_worker() -> None:
    """Each cast worker's first call, before it imports numpy and the cast modules.

    Ctrl-C reaches the whole process group: the caller cancels and stops the workers, which must
    not die of it with a traceback half-way through.
    """
    os.environ[BLAS_THREADS_ENV] = "1"  # a worker never uses BLAS, whatever the caller set
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from . import cast_worker  # noqa: F401 - numpy and the kernels, loaded before the first task
