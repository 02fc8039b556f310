"""The pods a ``fit`` question asks about: a workload's pods (a Pod, or a controller's template
times its replicas) and the PodGroups that make gangs of them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpuplane.fit.gpu_answer import DEFAULT_MESSAGE_BYTES
from gpuplane.fit.holdings import MAX_HOLDINGS
from gpuplane.scheduler.framework.types import PodGroupInfo, PodInfo
from gpuplane.slicing.dra.claims import ResourceClaim
from gpuplane.slicing.dra.pod_claims import PodClaims


@dataclass(frozen=True, slots=True)
class WorkloadPod:
    info: PodInfo
    workload: str  # "Deployment/llama-70b"
    # Pods stamped from the same template share it (capacity is asked once per template).
    template: str


@dataclass(frozen=True, slots=True)
class FitWorkload:
    pods: tuple[WorkloadPod, ...]
    pod_groups: Mapping[str, PodGroupInfo] = field(default_factory=dict)
    # DRA: the claims the resourceclaim controller would make for the pods, and each pod's
    # claim entries (by pod uid).
    claims: tuple[ResourceClaim, ...] = ()
    pod_claims: Mapping[str, PodClaims] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FitSettings:
    # The all-reduce whose time is reported per GPU set (bytes per GPU).
    message_bytes: int = DEFAULT_MESSAGE_BYTES
    # Capacity search: at most this many more replicas are tried per template.
    capacity_limit: int = 256
    # Remedies for what does not fit (defragmentation moves, MIG repartitions).
    remedies: bool = True
    # Candidate nodes tried per unplaced pod when looking for defragmentation moves.
    defrag_candidates: int = 16
    max_holdings: int = MAX_HOLDINGS
