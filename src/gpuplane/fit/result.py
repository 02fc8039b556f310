"""What ``fit`` answers, as frozen values; ``as_dict`` is the ``--json`` form (camelCase keys)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from gpuplane.slicing.mig.layout import Layout
from gpuplane.slicing.mig.profiles import MigGpu


class Outcome(StrEnum):
    FITS = "fits"
    FITS_AFTER_PREEMPTION = "fits-after-preemption"
    REJECTED_BY_KUBELET = "rejected-by-kubelet"
    WAITING = "waiting"  # held at Permit: its gang is not complete
    UNSCHEDULABLE = "unschedulable"


@dataclass(frozen=True, slots=True)
class GpuSet:
    """A GPU set on one node and what it is worth for collectives."""

    gpus: tuple[int, ...]
    numa_nodes: tuple[int, ...]
    ring: tuple[int, ...]
    bottleneck_gbps: float
    allreduce_ms: float  # ring all-reduce of the answer's message size

    def as_dict(self) -> dict[str, Any]:
        return {
            "gpus": list(self.gpus),
            "numaNodes": list(self.numa_nodes),
            "ring": list(self.ring),
            "bottleneckGBps": round(self.bottleneck_gbps, 3),
            "allReduceMs": round(self.allreduce_ms, 4),
        }


@dataclass(frozen=True, slots=True)
class GpuAnswer:
    """The GPUs a pod gets on its node: the kubelet's (the node's device plugin policy), and what
    gpuplane's and NVIDIA's best-effort choices would be, on the assumed free GPUs; plus the range
    of gpuplane's bottleneck over every holding the node could really have."""

    kubelet: GpuSet | None
    gpuplane: GpuSet | None
    nvidia: GpuSet | None
    free_assumed: tuple[int, ...]
    uncertain: bool  # some bound pods on the node do not name their GPUs
    holdings_possible: int = 1
    bottleneck_range_gbps: tuple[float, float] | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kubelet": self.kubelet.as_dict() if self.kubelet else None,
            "gpuplane": self.gpuplane.as_dict() if self.gpuplane else None,
            "nvidiaBestEffort": self.nvidia.as_dict() if self.nvidia else None,
            "freeAssumed": list(self.free_assumed),
            "uncertain": self.uncertain,
            "holdingsPossible": self.holdings_possible,
        }
        if self.bottleneck_range_gbps is not None:
            low, high = self.bottleneck_range_gbps
            out["bottleneckRangeGBps"] = [round(low, 3), round(high, 3)]
        return out


@dataclass(frozen=True, slots=True)
class KubeletVerdict:
    admit: bool
    policy: str  # Topology Manager policy/scope, e.g. "single-numa-node/container"
    reason: str = ""
    message: str = ""
    numa_affinity: tuple[int, ...] | None = None
    explanation: str = ""  # the GPU-level why, when it rejects
    known: bool = True  # False: the node has no hardware model, the verdict is not computed

    def as_dict(self) -> dict[str, Any]:
        return {
            "admit": self.admit,
            "policy": self.policy,
            "reason": self.reason,
            "message": self.message,
            "numaAffinity": None if self.numa_affinity is None else list(self.numa_affinity),
            "explanation": self.explanation,
            "known": self.known,
        }


@dataclass(frozen=True, slots=True)
class NodeReasons:
    """Nodes rejected for the same reasons, with gpuplane's GPU-level account."""

    nodes: tuple[str, ...]  # the first few, by name
    reasons: tuple[str, ...]  # "Plugin: reason"
    detail: str = ""
    all_nodes: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.all_nodes) or len(self.nodes)

    def as_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "nodes": list(self.nodes),
            "reasons": list(self.reasons),
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class Victim:
    pod: str  # namespace/name
    priority: int
    gpus: int

    def as_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "priority": self.priority, "gpus": self.gpus}


@dataclass(frozen=True, slots=True)
class Move:
    pod: str
    from_node: str
    to_node: str

    def as_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "from": self.from_node, "to": self.to_node}


@dataclass(frozen=True, slots=True)
class PodAnswer:
    pod: str  # namespace/name
    workload: str  # Kind/name of the object the pod comes from
    outcome: Outcome
    node: str | None = None
    hardware: str = ""  # where the node's hardware model came from
    gpus: GpuAnswer | None = None
    kubelet: KubeletVerdict | None = None
    fit_error: str | None = None
    node_reasons: tuple[NodeReasons, ...] = ()
    victims: tuple[Victim, ...] = ()
    preempt_node: str | None = None
    mig: str | None = None  # the MIG device a MIG request gets (profile, node)
    dra_devices: tuple[str, ...] = ()  # DRA: "driver/pool/device" allocated to its claims

    def as_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "workload": self.workload,
            "outcome": str(self.outcome),
            "node": self.node,
            "hardware": self.hardware,
            "gpus": self.gpus.as_dict() if self.gpus else None,
            "kubelet": self.kubelet.as_dict() if self.kubelet else None,
            "fitError": self.fit_error,
            "nodeReasons": [r.as_dict() for r in self.node_reasons],
            "preemption": None
            if self.preempt_node is None
            else {"node": self.preempt_node, "victims": [v.as_dict() for v in self.victims]},
            "mig": self.mig,
            "draDevices": list(self.dra_devices),
        }


@dataclass(frozen=True, slots=True)
class GangAnswer:
    group: str  # namespace/name
    min_member: int
    placed: int
    fits: bool
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "podGroup": self.group,
            "minMember": self.min_member,
            "placed": self.placed,
            "fits": self.fits,
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class MigGpuChange:
    """One GPU a MIG repartition reconfigures: its layout now and the planner's target."""

    node: str
    gpu: int
    model: MigGpu
    before: Layout
    after: Layout

    def as_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "gpu": self.gpu,
            "model": self.model.name,
            "before": self.before.describe(),
            "after": self.after.describe(),
        }


@dataclass(frozen=True, slots=True)
class Remedy:
    """Something that would make the unplaced pods fit, and what it disrupts."""

    kind: str  # "preemption" | "defragment" | "mig-repartition"
    summary: str
    moves: tuple[Move, ...] = ()
    disrupted: tuple[str, ...] = ()
    fits_after: int = 0  # pods of the workload placed once it is done
    mig_changes: tuple[MigGpuChange, ...] = ()  # mig-repartition: the GPUs reconfigured

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "summary": self.summary,
            "moves": [m.as_dict() for m in self.moves],
            "disrupted": list(self.disrupted),
            "fitsAfter": self.fits_after,
            "migChanges": [c.as_dict() for c in self.mig_changes],
        }


@dataclass(frozen=True, slots=True)
class Capacity:
    """How many more pods like this one fit now (the cluster-capacity question)."""

    template: str
    max_replicas: int
    capped: bool  # the count stopped at the search limit

    def as_dict(self) -> dict[str, Any]:
        return {"template": self.template, "maxReplicas": self.max_replicas, "capped": self.capped}


@dataclass(frozen=True, slots=True)
class FitAnswer:
    profile: str
    kubernetes_version: str
    nodes: int
    pods: tuple[PodAnswer, ...]
    gangs: tuple[GangAnswer, ...] = ()
    remedies: tuple[Remedy, ...] = ()
    capacity: tuple[Capacity, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def with_notes(self, notes: tuple[str, ...]) -> FitAnswer:
        return FitAnswer(
            self.profile,
            self.kubernetes_version,
            self.nodes,
            self.pods,
            self.gangs,
            self.remedies,
            self.capacity,
            (*notes, *self.notes),
        )

    @property
    def all_fit(self) -> bool:
        placed = all(p.outcome is Outcome.FITS for p in self.pods)
        return placed and all(g.fits for g in self.gangs)

    def count(self, outcome: Outcome) -> int:
        return sum(1 for p in self.pods if p.outcome is outcome)

    def as_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "kubernetesVersion": self.kubernetes_version,
            "nodes": self.nodes,
            "allFit": self.all_fit,
            "counts": {str(o): self.count(o) for o in Outcome},
            "pods": [p.as_dict() for p in self.pods],
            "gangs": [g.as_dict() for g in self.gangs],
            "remedies": [r.as_dict() for r in self.remedies],
            "capacity": [c.as_dict() for c in self.capacity],
            "notes": list(self.notes),
        }
