"""Twin runs for scenario tests that keep the simulation and its result side by side."""

from __future__ import annotations

from typing import Any

from gpuplane.twin.build import build_simulation
from gpuplane.twin.simulation import RunResult, Simulation


class RecordedSimulation(Simulation):
    """A ``Simulation`` with a typed slot for what its ``run`` returned.

    Scenario tests read both the finished run (``result``) and the live objects (``cluster``,
    ``component(KubeletSim)``); keeping the result on the simulation lets one value carry both.
    """

    result: RunResult


def build_recorded(*args: Any, **kw: Any) -> RecordedSimulation:
    """``twin.build.build_simulation(*args, **kw)`` as a ``RecordedSimulation``."""
    sim = build_simulation(*args, **kw)
    return RecordedSimulation(
        sim.cluster, sim.components, name=sim.name, placement=sim.placement_name
    )
