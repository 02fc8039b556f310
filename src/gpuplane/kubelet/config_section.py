"""The KubeletConfiguration fields gpuplane models: a scenario pool's ``kubelet:`` section and
``gpuplane fit``'s ``--kubelet-config`` file (``k8s.cluster.fit_pools``) read into one shape.

Names are KubeletConfiguration's (kubelet.config.k8s.io/v1beta1), so a block copied from a real
kubelet config file reads as is; ``gpuAllocationPolicy`` and ``publishNodeResourceTopology`` are
gpuplane's (the device plugin's preference policy, and whether NFD's topology-updater publishes
the node's NodeResourceTopology).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpuplane.core.cpuset import parse_cpu_list
from gpuplane.core.errors import InputError
from gpuplane.kubelet.config import (
    CpuManagerPolicy,
    GpuAllocation,
    KubeletConfig,
    MemoryManagerPolicy,
    TopologyScope,
)
from gpuplane.kubelet.topology_manager.policy import PolicyName, parse_policy_options


class KubeletSection(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    topology_manager_policy: Literal["none", "best-effort", "restricted", "single-numa-node"] = (
        Field(default="none", alias="topologyManagerPolicy")
    )
    topology_manager_scope: Literal["container", "pod"] = Field(
        default="container", alias="topologyManagerScope"
    )
    topology_manager_policy_options: dict[str, str] = Field(
        default_factory=dict, alias="topologyManagerPolicyOptions"
    )
    cpu_manager_policy: Literal["none", "static"] = Field(default="none", alias="cpuManagerPolicy")
    memory_manager_policy: Literal["None", "Static"] = Field(
        default="None", alias="memoryManagerPolicy"
    )
    reserved_system_cpus: str | None = Field(default=None, alias="reservedSystemCPUs")
    gpu_allocation_policy: Literal["best-effort", "first", "gpuplane"] = Field(
        default="best-effort", alias="gpuAllocationPolicy"
    )
    publish_node_resource_topology: bool = Field(default=True, alias="publishNodeResourceTopology")

    @field_validator("topology_manager_policy_options")
    @classmethod
    def _options(cls, value: dict[str, str]) -> dict[str, str]:
        try:
            parse_policy_options(value)
        except InputError as err:
            raise ValueError(str(err)) from None
        return value

    @field_validator("reserved_system_cpus")
    @classmethod
    def _cpus(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_cpu_list(value)
            except InputError as err:
                raise ValueError(str(err)) from None
        return value

    def config(self, reserved_cpus: frozenset[int]) -> KubeletConfig:
        return KubeletConfig(
            topology_manager_policy=PolicyName(self.topology_manager_policy),
            topology_manager_scope=TopologyScope(self.topology_manager_scope),
            topology_manager_policy_options=parse_policy_options(
                self.topology_manager_policy_options
            ),
            cpu_manager_policy=CpuManagerPolicy(self.cpu_manager_policy),
            memory_manager_policy=MemoryManagerPolicy(self.memory_manager_policy),
            reserved_cpus=reserved_cpus,
            gpu_allocation=GpuAllocation(self.gpu_allocation_policy),
            publish_nrt=self.publish_node_resource_topology,
        )
