"""Twin runs for scenario tests that keep the simulation and its result side by side."""

from __future__ import annotations

from gpuplane.twin.simulation import RunResult, Simulation


class RecordedSimulation(Simulation):
    """A ``Simulation`` with a typed slot for what its ``run`` returned.

    Scenario tests read both the finished run (``result``) and the live objects (``cluster``,
    ``kubelet``); keeping the result on the simulation lets one value carry both.
    """

    result: RunResult
