"""The GPU Operator's section of the run summary (``gpu_operator`` in summary.json)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuplane.twin.component import fields_dict


@dataclass(frozen=True, slots=True)
class UpgradeControllerSummary:
    reconciles: int
    max_nodes_in_progress: int
    max_nodes_unavailable: int

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class OperatorSummary:
    """Nodes by GPU-stack state; under a ClusterPolicy also the driver version, the nodes by
    upgrade state and the upgrade controller's figures (None, and left out of the JSON, for a
    pre-provisioned cluster)."""

    mode: str  # gpu-operator | pre-provisioned
    nodes_by_state: Mapping[str, int]
    driver_version: str | None = None
    nodes_by_upgrade_state: Mapping[str, int] | None = None
    upgrade_controller: UpgradeControllerSummary | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in fields_dict(self).items() if v is not None}
