"""A node pool's ``mig:`` section: MIG mode, its initial layout and gpuplane's repartitioning.

The pool's ``kubelet:`` section is ``gpuplane.kubelet.config_section.KubeletSection`` (the
KubeletConfiguration fields gpuplane models), shared with ``gpuplane fit``'s ``--kubelet-config``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class MigSection(BaseModel):
    """A pool's ``mig:``: MIG mode, its initial layout and gpuplane's repartitioning."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    strategy: Literal["mixed", "single"] = "mixed"
    config: str = Field(
        default="all-balanced",
        description="A named mig-parted config for the GPU model (all-1g.10gb, all-balanced, ...).",
    )
    dynamic: bool = Field(
        default=False, description="Let gpuplane's planner repartition GPUs for pending demand."
    )
    reconfigure_seconds: float = Field(default=60.0, gt=0)
    interval_seconds: float = Field(default=30.0, gt=0)

    @model_validator(mode="after")
    def _dynamic_needs_mixed(self) -> MigSection:
        if self.dynamic and self.strategy != "mixed":
            raise ValueError("dynamic repartitioning needs strategy: mixed")
        return self
