"""Collecting every located mistake of a scenario instead of stopping at the first.

``gpuplane validate`` and ``--dry-run`` read a scenario with a :class:`Problems` that collects:
each independent step (the scenario's shape, each node pool, the ClusterPolicy, the workloads,
the DRA files, the MIG changes, the serving section, the ScaledObjects, the faults) runs on its
own, a failed step adds its error and gives a neutral result, and steps that need a failed one's
result are skipped (their errors would only echo it). A normal run stops at the first mistake.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from gpuplane.core.errors import InputError, InputErrors

T = TypeVar("T")


@dataclass(slots=True)
class Problems:
    """Errors collected so far; with ``collect`` false the first one is raised at once."""

    collect: bool = False
    errors: list[InputError] = field(default_factory=list)

    def step(self, run: Callable[[], T]) -> tuple[T | None, bool]:
        """``(run(), True)``, or ``(None, False)`` after recording its error(s)."""
        try:
            return run(), True
        except InputErrors as many:
            if not self.collect:
                raise
            self.errors.extend(many.errors)
        except InputError as err:
            if not self.collect:
                raise
            self.errors.append(err)
        return None, False

    def raise_if_any(self) -> None:
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise InputErrors(self.errors)
