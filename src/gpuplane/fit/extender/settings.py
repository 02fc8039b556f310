"""What the extender's decisions may be tuned by (``gpuplane serve extender`` flags)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ExtenderSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    packing_weight: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description=(
            "Share of the prioritize score given to packing (the node's GPUs in use once the "
            "pod is placed: fuller nodes leave whole nodes free); the rest goes to the ring "
            "bandwidth of the GPU set the kubelet would give, relative to the best node's."
        ),
    )
    assume_ttl_s: float = Field(
        default=30.0,
        ge=0.0,
        description=(
            "How long a pod the extender bound or chose a node for counts as holding that "
            "node's GPUs while the cluster view does not show it bound yet (0: never assume)."
        ),
    )
