"""Where points run: the Executor protocol, and the in-process and local process pool ones.

An executor takes the base once (shipped to each worker a single time) and yields each point's
:class:`Outcome` as it finishes, in whatever order; the runner makes the table's order.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Sequence
from multiprocessing.pool import Pool
from typing import Protocol

from gpuplane.sweep.engine.base import SweepBase
from gpuplane.sweep.engine.outcome import Outcome, evaluate_point
from gpuplane.sweep.engine.point import Point


class Executor(Protocol):
    @property
    def description(self) -> str: ...

    def run(
        self, base: SweepBase, figures: tuple[str, ...], points: Sequence[Point]
    ) -> Iterator[Outcome]:
        """Each point's outcome as it finishes; closing the iterator stops the workers."""


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class InProcess:
    """Every point in this process, in order: for one worker, and the reference for the rest."""

    description = "in process"

    def run(
        self, base: SweepBase, figures: tuple[str, ...], points: Sequence[Point]
    ) -> Iterator[Outcome]:
        for point in points:
            yield evaluate_point(base, figures, point)


# The base and figures a pool worker got once, at its start.
_installed: tuple[SweepBase, tuple[str, ...]] | None = None


def _install(base: SweepBase, figures: tuple[str, ...]) -> None:
    global _installed
    _installed = (base, figures)


def _evaluate_installed(point: Point) -> Outcome:
    assert _installed is not None, "the pool's initializer installs the base"
    return evaluate_point(_installed[0], _installed[1], point)


class LocalPool:
    """A pool of worker processes on this machine, one point per task (``chunksize`` 1, so a
    slow point does not hold back a batch of fast ones), the base given to each worker once."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or available_cpus()

    @property
    def description(self) -> str:
        return f"local pool, {self.workers} worker{'s' if self.workers != 1 else ''}"

    def run(
        self, base: SweepBase, figures: tuple[str, ...], points: Sequence[Point]
    ) -> Iterator[Outcome]:
        if not points:
            return
        workers = min(self.workers, len(points))
        pool: Pool = multiprocessing.get_context().Pool(
            workers, initializer=_install, initargs=(base, figures)
        )
        try:
            yield from pool.imap_unordered(_evaluate_installed, points, chunksize=1)
            pool.close()
        finally:
            pool.terminate()
            pool.join()
