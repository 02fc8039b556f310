"""The live MIG repartitioning controller's inputs, settings and decision (pure values).

The inputs are what the API says, already read (``gpuplane.k8s.cluster.mig_inputs`` builds them
from nodes, pods, PodDisruptionBudgets and the mig-parted ConfigMap):

- a node: its GPU model, the layouts its ``nvidia.com/mig.config`` label gives, the label's
  value and ``nvidia.com/mig.config.state``, the device plugin's MIG strategy, whether new pods
  may land on it;
- a pod: bound or pending, the MIG instances it asks (per profile), its ``nvidia.com/gpu``;
- a PodDisruptionBudget: its namespace, selector and ``status.disruptionsAllowed``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from gpuplane.api.selectors import LabelSelector
from gpuplane.slicing.mig.layout import Layout
from gpuplane.slicing.mig.parted_config import PartedEntry
from gpuplane.slicing.mig.plan_types import GpuTarget
from gpuplane.slicing.mig.profiles import MigGpu

# mig.config.state values while NVIDIA's MIG manager is at work on a node.
IN_PROGRESS_STATES = ("pending", "rebooting")
FAILED_STATE = "failed"
SINGLE_STRATEGY = "single"
# A pending pod's annotation: its nvidia.com/gpu are MIG devices of this profile (single strategy).
MIG_PROFILE_ANNOTATION = "gpuplane.io/mig-profile"


@dataclass(frozen=True, slots=True)
class ControlNode:
    name: str
    model: MigGpu
    layouts: tuple[Layout, ...]  # per GPU index, as the current mig.config gives them
    config: str | None  # nvidia.com/mig.config
    state: str | None  # nvidia.com/mig.config.state
    strategy: str = "mixed"  # the device plugin's MIG strategy: mixed | single
    schedulable: bool = True  # not cordoned
    layouts_known: bool = True  # False: the config is unknown, every GPU taken as empty
    product: str | None = None  # GFD's nvidia.com/gpu.product without its -MIG-<profile>


@dataclass(frozen=True, slots=True)
class ControlPod:
    key: str  # namespace/name
    namespace: str
    labels: Mapping[str, str]
    node: str | None  # None: pending, not bound
    mig: tuple[tuple[str, int], ...] = ()  # profile -> instances asked
    gpus: int = 0  # nvidia.com/gpu (on a single-strategy node: MIG devices)
    # A pod asking nvidia.com/gpu that means MIG devices of one profile on single-strategy
    # nodes (its node selector or affinity names a <product>-MIG-<profile> gpu.product, or the
    # gpuplane.io/mig-profile annotation); product: the <product> part, None for any model.
    single_profile: str | None = None
    single_product: str | None = None

    @property
    def holds_gpu(self) -> bool:
        return self.node is not None and (self.gpus > 0 or bool(self.mig))


@dataclass(frozen=True, slots=True)
class DisruptionBudget:
    key: str  # namespace/name
    namespace: str
    selector: LabelSelector
    disruptions_allowed: int

    def covers(self, pod: ControlPod) -> bool:
        # policy/v1: a PDB selects pods of its own namespace; an empty selector selects all.
        return pod.namespace == self.namespace and self.selector.matches(pod.labels)


@dataclass(frozen=True, slots=True)
class ControlSnapshot:
    nodes: tuple[ControlNode, ...]
    pods: tuple[ControlPod, ...]
    budgets: tuple[DisruptionBudget, ...] = ()


class ControlSettings(BaseModel):
    """The safety rules the controller keeps."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_unavailable: int = Field(
        default=1,
        ge=1,
        description="Most nodes reconfiguring at once, counting those already pending or "
        "rebooting.",
    )
    allow_evict: bool = Field(
        default=False,
        description="Let a change disrupt running GPU pods, when their PodDisruptionBudgets "
        "allow it.",
    )
    time_limit_s: float = Field(default=10.0, gt=0, description="Planner time limit per stage.")


class SkipReason(StrEnum):
    IN_PROGRESS = "in-progress"  # mig.config.state is pending or rebooting
    MAX_UNAVAILABLE = "max-unavailable"
    WOULD_EVICT = "would-evict"  # running GPU pods and no --allow-evict
    PDB = "pdb"  # a PodDisruptionBudget allows fewer disruptions
    CORDONED = "cordoned"
    PREVIOUSLY_FAILED = "previously-failed"  # the plan would set the config that failed again


@dataclass(frozen=True, slots=True)
class NodeChange:
    """Relabel one node to a named mig-parted config."""

    node: str
    config: str  # the new nvidia.com/mig.config
    previous: str | None
    entries: tuple[PartedEntry, ...]  # the config's content (for the ConfigMap)
    model: MigGpu
    targets: tuple[tuple[int, GpuTarget], ...]  # changed GPUs by index
    evicts: tuple[str, ...]  # pods the change disrupts (namespace/name)
    message: str

    @property
    def labels(self) -> dict[str, str]:
        return {"nvidia.com/mig.config": self.config}


@dataclass(frozen=True, slots=True)
class SkippedAction:
    node: str
    reason: SkipReason
    message: str
    evicts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MigControllerDecision:
    changes: tuple[NodeChange, ...]
    skipped: tuple[SkippedAction, ...]
    demand: tuple[tuple[str, int], ...]  # pending MIG instances per profile
    unplaced: tuple[tuple[str, int], ...] = ()  # what even the plan could not serve
    plan_status: str = "no demand"
    # pending nvidia.com/gpu on single-strategy nodes, per profile, and what no change serves
    single_demand: tuple[tuple[str, int], ...] = ()
    single_unplaced: tuple[tuple[str, int], ...] = ()
    notes: tuple[str, ...] = field(default=())
