"""Run one plugin on a snapshot, outside a full profile."""

from __future__ import annotations

from typing import Any

from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.cycle import Framework
from gpuplane.scheduler.framework.plugin_sets import resolve_profile
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.state import ClusterState, CycleState


def framework(data: dict[str, Any] | None = None) -> Framework:
    return Framework(resolve_profile(ProfileConfig.model_validate(data or {})))


def plugin(name: str, data: dict[str, Any] | None = None) -> Any:
    return framework(data).plugins[name]


def state(snap: ClusterSnapshot) -> tuple[CycleState, ClusterState]:
    return CycleState(), ClusterState(snap)
