"""Run one plugin on a snapshot, outside a full profile."""

from __future__ import annotations

from typing import Any

from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.cycle import Framework
from gpuplane.scheduler.framework.plugin_sets import resolve_profile
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.plugins.registry import in_tree_registry


def framework(data: dict[str, Any] | None = None) -> Framework:
    registry = in_tree_registry()
    return Framework(resolve_profile(ProfileConfig.model_validate(data or {}), registry), registry)


def plugin(name: str, data: dict[str, Any] | None = None) -> Any:
    return framework(data).plugins[name]


def state(snap: ClusterSnapshot) -> tuple[CycleState, ClusterState]:
    return CycleState(), ClusterState(snap)
