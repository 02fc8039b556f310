"""The part of a node's KubeletConfiguration that decides pod admission and device choice.

Field names follow ``kubelet.config.k8s.io/v1beta1`` KubeletConfiguration; defaults are the
kubelet's: Topology Manager ``none`` with scope ``container``, CPU manager ``none``, memory
manager ``None``. ``gpu_allocation`` is the device plugin's side, not the kubelet's: how the
plugin answers GetPreferredAllocation for ``nvidia.com/gpu``:

- ``best-effort``: NVIDIA's k8s-device-plugin default, go-gpuallocator's best-effort policy
  (``gpuplane.kubelet.gpuallocator``);
- ``first``: no preference; the kubelet takes the lowest free device ids (what the kubelet does
  for a plugin without GetPreferredAllocation, its devices sorted);
- ``gpuplane``: gpuplane's widest-ring, NUMA-aware, anti-stranding choice
  (``gpuplane.kubelet.gpu_sets.pick_gpus``).

Validation follows the kubelet's own start-up checks: the static CPU manager needs a non-zero CPU
reservation (``reservedSystemCPUs`` or kube/system-reserved cpu), and Topology Manager policy
options are checked by ``parse_policy_options``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from gpuplane.kubelet.topology_manager.policy import PolicyName, PolicyOptions


class CpuManagerPolicy(StrEnum):
    NONE = "none"
    STATIC = "static"


class MemoryManagerPolicy(StrEnum):
    NONE = "None"
    STATIC = "Static"


class TopologyScope(StrEnum):
    CONTAINER = "container"
    POD = "pod"


class GpuAllocation(StrEnum):
    BEST_EFFORT = "best-effort"
    FIRST = "first"
    GPUPLANE = "gpuplane"


@dataclass(frozen=True, slots=True)
class KubeletConfig:
    topology_manager_policy: PolicyName = PolicyName.NONE
    topology_manager_scope: TopologyScope = TopologyScope.CONTAINER
    topology_manager_policy_options: PolicyOptions = field(default_factory=PolicyOptions)
    cpu_manager_policy: CpuManagerPolicy = CpuManagerPolicy.NONE
    memory_manager_policy: MemoryManagerPolicy = MemoryManagerPolicy.NONE
    # The CPUs the static CPU manager keeps out of the exclusive pool (reservedSystemCPUs, or
    # the lowest-numbered CPUs covering kube- plus system-reserved cpu).
    reserved_cpus: frozenset[int] = frozenset()
    gpu_allocation: GpuAllocation = GpuAllocation.BEST_EFFORT
    # Whether the node publishes a NodeResourceTopology object (NFD topology-updater runs).
    publish_nrt: bool = True

    @property
    def may_reject(self) -> bool:
        """Whether admission can refuse a pod that fits the node's allocatable.

        ``none`` and ``best-effort`` always admit; ``restricted`` and ``single-numa-node`` refuse
        pods whose preferred alignment is impossible. The static CPU manager alone never refuses
        a pod that fits (it fails allocation only when the scheduler's books are wrong).
        """
        return self.topology_manager_policy in (
            PolicyName.RESTRICTED,
            PolicyName.SINGLE_NUMA_NODE,
        )

    @property
    def manages_resources(self) -> bool:
        """Whether admission must run the Topology Manager and resource managers at all."""
        return (
            self.topology_manager_policy is not PolicyName.NONE
            or self.cpu_manager_policy is CpuManagerPolicy.STATIC
            or self.memory_manager_policy is MemoryManagerPolicy.STATIC
        )
