"""Code a benchmark runs in a child process that reports its own peak memory.

``wait4``'s ``ru_maxrss`` keeps the peak of the process the child was forked from (the bench,
which built big files) across exec, so the child prints its own ``VmHWM`` on exit instead;
:func:`peak_kib` reads it back from the child's stderr.
"""

from __future__ import annotations

PEAK = """
import atexit, sys
def peak():
    with open("/proc/self/status") as f:
        kib = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
    sys.stderr.write(f"VmHWM {kib}\\n")
atexit.register(peak)
"""
CLI = (
    PEAK
    + """
from inspector.cli.dispatch import console_main
sys.argv = ["checkpoint-inspector", *sys.argv[1:]]
console_main()
"""
)


def peak_kib(stderr: str) -> int:
    return int(stderr.rsplit("VmHWM ", 1)[1].split()[0])
