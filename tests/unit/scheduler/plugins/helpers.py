"""Run one plugin on a snapshot, outside a full profile."""

from __future__ import annotations

from typing import Any

from gpuplane.scheduler.framework.config import ProfileConfig, gpuplane_profile
from gpuplane.scheduler.framework.cycle import Framework
from gpuplane.scheduler.framework.plugin_sets import resolve_profile
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.plugins.registry import in_tree_registry


def framework(data: dict[str, Any] | None = None, *, gpuplane: bool = False) -> Framework:
    """kube's default profile changed by ``data``, or gpuplane's profile (``gpuplane=True``)."""
    registry = in_tree_registry()
    cfg = gpuplane_profile() if gpuplane else ProfileConfig.model_validate(data or {})
    return Framework(resolve_profile(cfg, registry), registry)


def plugin(name: str, data: dict[str, Any] | None = None, *, gpuplane: bool = False) -> Any:
    return framework(data, gpuplane=gpuplane).plugins[name]


def state(snap: ClusterSnapshot) -> tuple[CycleState, ClusterState]:
    return CycleState(), ClusterState(snap)
