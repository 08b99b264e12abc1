"""Progress reporting shared by every long job (stats, cast, diff), free of any UI toolkit.

Jobs are generators: they ``yield Progress`` between bounded steps and ``return`` their result.
A caller cancels by simply not asking for the next step (then ``close()``-ing the generator),
so cancellation is cooperative and cleanup runs in the job's ``finally`` blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TypeVar

R = TypeVar("R")


@dataclass(frozen=True)
class Progress:
    done: int  # bytes processed so far
    total: int  # bytes the job will process
    name: str = ""  # tensor being processed

    @property
    def fraction(self) -> float:
        return 1.0 if self.total <= 0 else min(1.0, self.done / self.total)


Job = Generator[Progress, None, R]


def mapped(job: Job[R], progress: Callable[[Progress], Progress]) -> Job[R]:
    """``job`` as a step of a larger one: each of its steps as ``progress`` maps it, its result
    returned; closed with the larger job (a cancel reaches its ``finally``)."""
    try:
        while True:
            try:
                p = next(job)
            except StopIteration as stop:
                return stop.value
            yield progress(p)
    finally:
        job.close()


def run_job(job: Job[R], on_progress: Callable[[Progress], object] | None = None) -> R:
    """Drive a job to completion on the calling thread and return its result."""
    try:
        while True:
            try:
                p = next(job)
            except StopIteration as stop:
                return stop.value
            if on_progress is not None:
                on_progress(p)
    finally:
        job.close()  # interrupted (Ctrl-C, SIGTERM) outside the job: its cleanup runs now
