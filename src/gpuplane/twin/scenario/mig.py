"""MIG in the scenario: a pool's MIG settings and the ``nvidia.com/mig.config`` label changes.

Plain values the loaders fill in (``gpuplane.k8s.scenario.node_pools``,
``gpuplane.k8s.scenario.loader``); the devices a MIG layout advertises are the cluster's
(``slicing.mig.node_devices``), applying a label change is the MIG manager's
(``twin.mig.manager``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuplane.slicing.mig.layout import Layout


@dataclass(frozen=True, slots=True)
class MigPoolSpec:
    strategy: str = "mixed"  # mixed | single
    config: str = "all-balanced"  # a named mig-parted config for the GPU model
    # gpuplane's demand-driven repartitioning controller (the live one) relabels the nodes.
    dynamic: bool = False
    reconfigure_s: float = 60.0  # the MIG manager's drain, mig-parted apply, plugin re-advertise
    interval_s: float = 30.0  # the controller's --interval
    max_unavailable: int = 1  # the controller's --max-unavailable
    allow_evict: bool = False  # the controller's --allow-evict
    layouts: tuple[Layout, ...] = field(default=())  # filled from ``config`` per GPU


@dataclass(frozen=True, slots=True)
class MigConfigChange:
    """``kubectl label node <pool nodes> nvidia.com/mig.config=<config> --overwrite`` at ``t_s``."""

    t_s: float
    pool: str
    config: str
    reconfigure_s: float = 60.0
