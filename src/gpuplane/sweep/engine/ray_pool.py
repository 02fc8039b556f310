"""Points as Ray Core tasks: one task per point, outcomes streamed back as they finish.

Ray is optional (``pip install gpuplane[ray]``). The base goes into Ray's object store once
(``ray.put``) and every task reads it from there, so the workers need gpuplane installed but none
of the base's files. ``address``: ``local`` starts Ray in this process with ``workers`` CPUs
(gone when the sweep ends); ``auto`` joins the cluster ``ray start`` made on this machine (or
``RAY_ADDRESS``); anything else is a cluster address (``HOST:6379``, ``ray://HOST:10001``), as
``ray.init(address=...)`` takes it. When Ray is already initialised in this process (a notebook,
the tests), that session is used and left running.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from typing import Any

from gpuplane.core.errors import UnavailableError
from gpuplane.sweep.engine.base import SweepBase
from gpuplane.sweep.engine.outcome import Outcome, evaluate_point
from gpuplane.sweep.engine.point import Point

INSTALL_HINT = "pip install 'gpuplane[ray]' (or pip install ray)"


def import_ray() -> Any:
    """The ``ray`` module, or an UnavailableError that says how to get it."""
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise UnavailableError(
            f"--ray needs Ray, which is not installed here ({exc}); install it with "
            f"{INSTALL_HINT}, or leave --ray out to use the local process pool"
        ) from None


class RayPool:
    """One Ray task per point (1 CPU each), all submitted at once, gathered as they finish."""

    def __init__(self, address: str = "local", workers: int | None = None) -> None:
        self.address = address
        self.workers = workers
        self._ray = import_ray()

    @property
    def description(self) -> str:
        where = "started here" if self.address == "local" else self.address
        return f"Ray ({where})"

    def _connect(self) -> bool:
        """Initialise Ray unless it is; True when this call started it (and must stop it)."""
        ray = self._ray
        if ray.is_initialized():
            return False
        quiet: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        try:
            if self.address == "local":
                ray.init(num_cpus=self.workers, **quiet)
            else:
                ray.init(address=self.address, **quiet)
        except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
            hint = (
                "start one with `ray start --head`, or use --ray local"
                if self.address == "auto"
                else "HOST:6379 of a running cluster's head, or ray://HOST:10001"
            )
            raise UnavailableError(
                f"cannot start or join Ray at {self.address!r}: {exc}; {hint}"
            ) from None
        return True

    def run(
        self, base: SweepBase, figures: tuple[str, ...], points: Sequence[Point]
    ) -> Iterator[Outcome]:
        if not points:
            return
        ray = self._ray
        started = self._connect()
        try:
            task = ray.remote(num_cpus=1)(evaluate_point)
            base_ref, figures_ref = ray.put(base), ray.put(figures)
            pending = [task.remote(base_ref, figures_ref, p) for p in points]
            try:
                while pending:
                    done, pending = ray.wait(pending, num_returns=1)
                    yield ray.get(done[0])
            finally:
                for ref in pending:
                    ray.cancel(ref, force=True)
        finally:
            if started:
                ray.shutdown()
