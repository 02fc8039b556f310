"""A node pool's ``mig:`` section: MIG mode, its initial layout and gpuplane's repartitioning.

The pool's ``kubelet:`` section is ``gpuplane.kubelet.config_section.KubeletSection`` (the
KubeletConfiguration fields gpuplane models), shared with ``gpuplane fit``'s ``--kubelet-config``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class MigSection(BaseModel):
    """A pool's ``mig:``: MIG mode, its initial layout and gpuplane's repartitioning controller.

    With ``dynamic`` the twin runs the live controller (``gpuplane serve mig-controller
    --apply``) on the pool's nodes; ``interval_seconds``, ``max_unavailable`` and
    ``allow_evict`` are its ``--interval``, ``--max-unavailable`` and ``--allow-evict`` (one
    controller: every dynamic pool must give the same values).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    strategy: Literal["mixed", "single"] = "mixed"
    config: str = Field(
        default="all-balanced",
        description="A named mig-parted config for the GPU model (all-1g.10gb, all-balanced, ...).",
    )
    dynamic: bool = Field(
        default=False,
        description="Let gpuplane's MIG controller relabel the pool's nodes for pending demand.",
    )
    reconfigure_seconds: float = Field(
        default=60.0, gt=0, description="How long the MIG manager takes to apply a config."
    )
    interval_seconds: float = Field(
        default=30.0, gt=0, description="The controller's --interval: time between rounds."
    )
    max_unavailable: int = Field(
        default=1,
        ge=1,
        description="The controller's --max-unavailable: most nodes reconfiguring at once, "
        "counting those whose mig.config.state is pending or rebooting.",
    )
    allow_evict: bool = Field(
        default=False,
        description="The controller's --allow-evict: let a relabel disrupt running GPU pods "
        "(the MIG manager drains a node's MIG pods); without it a busy node is skipped.",
    )

    @model_validator(mode="after")
    def _controller_needs_dynamic(self) -> MigSection:
        given = self.model_fields_set & {"interval_seconds", "max_unavailable", "allow_evict"}
        if given and not self.dynamic:
            names = ", ".join(sorted(given))
            raise ValueError(f"{names} set the MIG controller, which needs dynamic: true")
        return self
