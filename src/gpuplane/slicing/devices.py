"""The devices a node advertises for one extended resource, and the physical GPU behind each.

A whole GPU is one device; time-slicing and MPS advertise each GPU ``replicas`` times (device
ids ``<uuid>::<k>``); MIG advertises GPU instances. Health follows the physical GPU: an XID that
marks a GPU unhealthy takes every device on it out of service.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class DeviceKind(StrEnum):
    GPU = "gpu"
    REPLICA = "replica"
    MIG = "mig"


@dataclass(frozen=True, slots=True)
class DeviceSlot:
    gpu: int  # the physical GPU index
    kind: DeviceKind = DeviceKind.GPU
    replica: int = 0
    profile: str | None = None  # MIG profile, e.g. 3g.40gb
    start: int | None = None  # MIG placement start (memory slice)
    memory_bytes: int = 0  # memory the device gives its user (0: the GPU's own)

    @property
    def device_id(self) -> str:
        if self.kind is DeviceKind.REPLICA:
            return f"GPU-{self.gpu}::{self.replica}"
        if self.kind is DeviceKind.MIG:
            return f"MIG-{self.gpu}-{self.profile}@{self.start}"
        return f"GPU-{self.gpu}"


def whole_gpus(num_gpus: int) -> list[DeviceSlot]:
    return [DeviceSlot(g) for g in range(num_gpus)]


def replicas(num_gpus: int, count: int) -> list[DeviceSlot]:
    """Device order as the plugin lists them: GPU 0's replicas, then GPU 1's, ..."""
    return [
        DeviceSlot(g, DeviceKind.REPLICA, replica=k) for g in range(num_gpus) for k in range(count)
    ]
