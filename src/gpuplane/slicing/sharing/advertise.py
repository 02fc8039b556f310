"""What a node advertises under a sharing config, the labels GFD adds, and the plugin's checks.

- Each physical GPU becomes ``replicas`` devices (ids ``<uuid>::<k>`` in the plugin), advertised
  under the resource name, or ``<name>.shared`` with ``renameByDefault``.
- GFD labels (k8s-device-plugin ``internal/lm``): ``nvidia.com/gpu.replicas``,
  ``nvidia.com/gpu.sharing-strategy`` (none, time-slicing, mps), ``nvidia.com/mps.capable``, and
  the product label suffixed ``-SHARED`` when replicated under the original name.
- Allocate refuses a container asking for more than one replica when
  ``failRequestsGreaterThanOne`` is set; the kubelet then fails the pod with
  UnexpectedAdmissionError (the message below is what ``kubectl describe`` shows).
- Which physical GPU a replica comes from: the plugin's GetPreferredAllocation for replicated
  devices distributes requests over the GPUs with the fewest replicas in use (lowest index on
  ties).
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuplane.api.strategies import SharingStrategy
from gpuplane.slicing.sharing.config import DevicePluginConfig

REPLICAS_LABEL = "nvidia.com/gpu.replicas"
STRATEGY_LABEL = "nvidia.com/gpu.sharing-strategy"
MPS_CAPABLE_LABEL = "nvidia.com/mps.capable"
PRODUCT_LABEL = "nvidia.com/gpu.product"
ADMISSION_REASON = "UnexpectedAdmissionError"


def sharing_labels(cfg: DevicePluginConfig, product: str, resource: str) -> dict[str, str]:
    replicas = cfg.replicas_of(resource) if cfg.strategy is not SharingStrategy.NONE else 1
    labels = {
        REPLICAS_LABEL: str(replicas),
        STRATEGY_LABEL: cfg.strategy.value,
        MPS_CAPABLE_LABEL: str(cfg.strategy is SharingStrategy.MPS).lower(),
    }
    if replicas > 1 and not cfg.rename_by_default:
        labels[PRODUCT_LABEL] = f"{product}-SHARED"
    return labels


def request_error(cfg: DevicePluginConfig, resource: str, count: int) -> str | None:
    """The kubelet's pod status message when the plugin's Allocate refuses ``count`` replicas."""
    if (
        cfg.strategy is SharingStrategy.NONE
        or cfg.replicas_of(resource) <= 1
        or not cfg.fail_requests_greater_than_one
        or count <= 1
    ):
        return None
    name = cfg.advertised_name(resource)
    return (
        "Allocate failed due to rpc error: code = Unknown desc = request for "
        f"'{name}: {count}' too large: maximum request size for shared resources is 1, "
        "which is unexpected"
    )


def distribute(used_per_gpu: Sequence[int], free_per_gpu: Sequence[int], count: int) -> list[int]:
    """Physical GPUs for ``count`` replicas: each from the GPU with the fewest replicas in use
    that still has a free one (lowest index on ties); [] if there are not enough."""
    used, free = list(used_per_gpu), list(free_per_gpu)
    out: list[int] = []
    for _ in range(count):
        candidates = [g for g in range(len(free)) if free[g] > 0]
        if not candidates:
            return []
        g = min(candidates, key=lambda i: (used[i], i))
        out.append(g)
        used[g] += 1
        free[g] -= 1
    return out
