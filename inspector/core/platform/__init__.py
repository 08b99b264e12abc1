"""Every call the program makes that not every system has, each with its fallback.

One small module per concern, so that the rest of the core never asks which system it runs on:

    facilities   which facilities this process may use (``CHECKPOINT_INSPECTOR_WITHOUT`` turns
                 any of them off, at call time: the tests run every fallback on Linux this way)
    file_io      pwrite, fsync (F_FULLFSYNC on macOS), folder fsync, replace with retries,
                 write-behind (sync_file_range, posix_fadvise)
    mapping      MAP_POPULATE and madvise on mapped ranges
    cpu          the cores this process may use (sched_getaffinity where there is one)
    locks        liveness locks on temps and journals (flock, or msvcrt.locking on Windows)
    links        a backup of a file a commit replaces (a hard link, else a copy)
    signals      the termination signals this system has (SIGTERM, SIGHUP)
    names        names and path forms Windows refuses, judged before any work starts

docs/reliability.md ("Platform facilities") lists each one, its fallback and what still holds.
"""
