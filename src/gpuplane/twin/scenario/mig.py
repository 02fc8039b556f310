"""MIG in the scenario: a pool's MIG settings and the ``nvidia.com/mig.config`` label changes.

Plain values the loaders fill in (``gpuplane.k8s.scenario.node_pools``,
``gpuplane.k8s.scenario.loader``); the devices a MIG layout advertises are the cluster's
(``twin.cluster.mig_devices``), applying a label change is the MIG manager's
(``twin.mig.manager``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuplane.slicing.mig.layout import Layout


@dataclass(frozen=True, slots=True)
class MigPoolSpec:
    strategy: str = "mixed"  # mixed | single
    config: str = "all-balanced"  # a named mig-parted config for the GPU model
    # gpuplane's demand-driven repartitioning controller (the planner) changes layouts.
    dynamic: bool = False
    reconfigure_s: float = 60.0  # drain-free instance create/destroy + plugin re-advertise
    interval_s: float = 30.0  # how often the repartitioning controller looks at demand
    layouts: tuple[Layout, ...] = field(default=())  # filled from ``config`` per GPU


@dataclass(frozen=True, slots=True)
class MigConfigChange:
    """``kubectl label node <pool nodes> nvidia.com/mig.config=<config> --overwrite`` at ``t_s``."""

    t_s: float
    pool: str
    config: str
    reconfigure_s: float = 60.0
