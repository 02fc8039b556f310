"""gpuplane's demand-driven MIG repartitioning controller, in the twin: the live controller.

NVIDIA's MIG manager applies whatever layout the ``nvidia.com/mig.config`` label names; choosing
that layout is left to the admin. gpuplane's controller chooses it from demand, and the twin
runs the deployed one (``gpuplane serve mig-controller --apply``): every ``interval_s`` a round
of :func:`gpuplane.slicing.mig.controller_loop.run_round` reads the controller's snapshot from
the twin (:class:`~gpuplane.twin.mig.control_source.TwinControlSource`), calls the live
``decide`` with the live flags (``max_unavailable``, ``allow_evict``; the strategy is each
node's), and writes through :class:`~gpuplane.twin.mig.control_writer.TwinMigWriter`: the
config into the MIG manager's file, the evictions, the label the twin's MIG manager applies
(state ``pending``, the node drained of its MIG pods, ``reconfigure_s`` later the new layout,
state ``success``).

``rounds`` keeps what every round decided and wrote (``MigRound``), for tests and reports.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from gpuplane.core.kernel import Priority
from gpuplane.slicing.mig.controller_loop import RoundOutcome, run_round
from gpuplane.slicing.mig.controller_types import ControlSettings
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.component import Component
from gpuplane.twin.kubelet.simulator import KubeletSim
from gpuplane.twin.mig.control_source import TwinControlSource
from gpuplane.twin.mig.control_writer import TwinMigWriter
from gpuplane.twin.mig.manager import MigManager


@dataclass(frozen=True, slots=True)
class MigRound:
    round_no: int  # 1, 2, ... as the live service numbers its rounds
    t_s: float
    outcome: RoundOutcome


class MigRepartitioner(Component):
    def __init__(
        self,
        cluster: Cluster,
        kubelet: KubeletSim,
        manager: MigManager,
        pools: Collection[str],
        interval_s: float,
        settings: ControlSettings,
    ) -> None:
        self.c = cluster
        self.interval_s = interval_s
        self.settings = settings
        self.source = TwinControlSource(cluster, pools)
        self.writer = TwinMigWriter(cluster, manager, kubelet)
        self.rounds: list[MigRound] = []

    def start(self, until_s: float) -> None:
        self.until_s = until_s
        self.c.loop.after(self.interval_s, self._tick, priority=Priority.CONTROLLER, label="mig")

    def _tick(self) -> None:
        if self.c.now + self.interval_s <= self.until_s:
            self.c.loop.after(
                self.interval_s, self._tick, priority=Priority.CONTROLLER, label="mig"
            )
        outcome = run_round(self.source, self.settings, self.writer)
        self.rounds.append(MigRound(len(self.rounds) + 1, self.c.now, outcome))
