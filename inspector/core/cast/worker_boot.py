"""What a process does before it imports numpy: the cast workers, and the program itself.

The program loads numpy and the cast modules on one core for ~0.25 s while the other idles; the
workers a large cast will use start there meanwhile (:func:`start_workers_early`: about 0.1 s
of a 2.1 s F32→F8_E4M3 cast of 1.5 GiB, medians of 12 alternating runs, docs/benchmarks.md).

numpy's OpenBLAS starts one thread per extra core when it loads, and those threads spin for a
while before they sleep. In a two-core F32→F8_E4M3 cast they took 6% of all CPU samples from the
casts, in the main process and each worker (perf record, docs/benchmarks.md). Nothing here
multiplies matrices, so numpy is loaded with one BLAS thread. This module imports no numpy: a
worker unpickles :func:`boot_worker` (and so imports this module) before anything else.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING

from ..platform.signals import sigint_blocked, unblock_sigint
from ..thread_start import signals_held
from .parent_watch import exit_when_parent_dies

if TYPE_CHECKING:
    from concurrent.futures import Executor, ProcessPoolExecutor

BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"
# the resource tracker's warning when it removes the semaphores of a program that was killed
_TRACKER_LEAK_WARNING = "ignore:resource_tracker:UserWarning"


def single_threaded_blas() -> None:
    """Load numpy (if not loaded yet) with one BLAS thread; an explicit setting is kept."""
    os.environ.setdefault(BLAS_THREADS_ENV, "1")


def boot_worker() -> None:
    """Each cast worker's first call, before it imports numpy and the cast modules.

    Ctrl-C reaches the whole process group: the caller cancels and stops the workers, which must
    not die of it with a traceback half-way through. A worker whose parent died (``kill -9``)
    exits by itself (:mod:`.parent_watch`).
    """
    os.environ[BLAS_THREADS_ENV] = "1"  # a worker never uses BLAS, whatever the caller set
    exit_when_parent_dies()  # a killed program leaves no worker behind
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # discards a Ctrl-C held since the spawn
    unblock_sigint()
    from . import worker  # noqa: F401 - numpy and the kernels, loaded before the first task


def spawn_workers(n: int) -> ProcessPoolExecutor:
    """``n`` cast worker processes, started now with ``spawn`` (never ``fork`` a process that
    may run Qt's threads), each booted by :func:`boot_worker` before numpy loads.

    A worker spends ~0.1 s starting Python and unpickling its first call before
    :func:`boot_worker` can ignore Ctrl-C, and Ctrl-C reaches the whole process group: a user
    who pressed it then saw a worker's ``KeyboardInterrupt`` traceback. So the workers are
    started with SIGINT blocked (the mask survives ``exec``) and unblock it once it is ignored;
    the caller gets a Ctrl-C pressed meanwhile right after.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import resource_tracker

    _quiet_tracker()  # before the pool's queues start the tracker
    with signals_held():  # the pool starts a thread of its own
        pool = ProcessPoolExecutor(
            n, mp_context=multiprocessing.get_context("spawn"), initializer=boot_worker
        )
        # the tracker's own start unblocks SIGINT in this thread when it ends: before the block
        resource_tracker.ensure_running()
        with sigint_blocked():
            for _ in range(n):  # a pool starts a process per task while none is idle
                pool.submit(os.getpid)
    return pool


def _quiet_tracker() -> None:
    """After a ``kill -9`` (the OOM killer, a closed terminal) multiprocessing's resource
    tracker removes the dead program's semaphores, as it should, and prints a Python warning
    that they "leaked" on the user's terminal. It starts with this interpreter's ``-W``
    options (``sys.warnoptions``): this one keeps that warning, and only it, quiet there."""
    if getattr(sys, "frozen", False):  # a bundle's executable takes no interpreter options
        return
    if _TRACKER_LEAK_WARNING not in sys.warnoptions:
        sys.warnoptions.append(_TRACKER_LEAK_WARNING)


_early: tuple[ProcessPoolExecutor, int] | None = None  # the pool start_workers_early started


def start_workers_early(n: int) -> None:
    """Start ``n`` workers now, before this process loads the cast; the cast takes them
    (:func:`take_early_workers`), or :func:`drop_early_workers` stops them."""
    global _early
    if n <= 0 or _early is not None:
        return
    _early = spawn_workers(n), n


def take_early_workers(n: int) -> ProcessPoolExecutor | None:
    """The workers started early, if there are ``n`` of them (others are stopped)."""
    global _early
    if _early is None:
        return None
    (pool, count), _early = _early, None
    if count == n:
        return pool
    stop_workers(pool)  # once loaded (~0.2 s): none outlives us
    return None


def stop_workers(pool: Executor) -> None:
    """Cancel what has not started, wait for what runs, and stop the pool's workers, with Ctrl-C
    (and SIGTERM/SIGHUP) held until that is done and raised right after.

    A second Ctrl-C while a cast stopped after the first interrupted the pool's wait for its
    manager thread: Python 3.11 then marks that thread stopped while it runs, the program's exit
    closes the queue before the workers' stop messages are in it, and the program waited at exit
    for workers that never stop. Stopping takes one chunk (~10 ms).
    """
    with signals_held():
        pool.shutdown(wait=True, cancel_futures=True)


def kill_workers(pool: ProcessPoolExecutor) -> None:
    """Stop at once, dropping the work in hand: for a pool whose work writes nothing (a
    preview's measurements), where waiting for a whole weight would make Cancel and Ctrl-C
    wait seconds. Signals are held until the pool is down, as in :func:`stop_workers`."""
    with signals_held():
        processes = getattr(pool, "_processes", None) or {}  # no public way before Python 3.14
        for process in list(processes.values()):
            process.kill()
        pool.shutdown(wait=True, cancel_futures=True)


def drop_early_workers() -> None:
    """Stop the workers started early that no cast took (a cast with nothing to narrow, or an
    error before it started), waiting until they have loaded and exited."""
    take_early_workers(-1)
