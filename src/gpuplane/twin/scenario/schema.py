"""The scenario file: one YAML document describing the cluster to simulate and what runs on it.

Sections: ``node_pools`` (hardware), ``control_plane`` (scheduler and kubelet settings),
``cluster_policy`` (the GPU Operator's ClusterPolicy, inline or ``path:``), ``operator`` (twin-only
timing of the operator's components), ``faults`` and ``workloads`` (Kubernetes manifests with
arrival and run-time models). Unknown keys are errors at every level.

This module checks the scenario's shape. Values that are Kubernetes formats (manifests, quantities
such as ``64Gi``, the ClusterPolicy) are kept as written here and read by
``gpuplane.k8s.scenario.loader``, the only layer that understands Kubernetes formats.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from gpuplane.api.taints import TaintEffect
from gpuplane.core.textio import read_named_file
from gpuplane.core.yamlio import validate_yaml
from gpuplane.kubelet.config_section import KubeletSection
from gpuplane.operator.faults import FaultSpec
from gpuplane.operator.settings import OperatorSettings
from gpuplane.scheduler.framework.config import REGISTRY_CONTEXT, ProfileConfig, check_profiles
from gpuplane.scheduler.plugins.registry import in_tree_registry
from gpuplane.twin.scenario.fields import Seconds
from gpuplane.twin.scenario.kubelet import MigSection
from gpuplane.twin.scenario.serving import ServingSection

_DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


# A Kubernetes quantity as written ("64Gi", 8, 0.5); gpuplane.k8s parses it.
QuantityText = StrictStr | StrictInt | StrictFloat


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _exactly_one(model: BaseModel, names: tuple[str, ...]) -> None:
    given = [n for n in names if getattr(model, n) is not None]
    if len(given) != 1:
        listed = ", ".join(names[:-1]) + f" or {names[-1]}"
        got = f" (got {', '.join(given)})" if given else ""
        raise ValueError(f"give exactly one of {listed}{got}")


class Taint(_Model):
    """A Kubernetes node taint."""

    key: str = Field(min_length=1)
    value: str = ""
    effect: TaintEffect


class Allocatable(_Model):
    """Node allocatable as ``kubectl describe node`` shows it; overrides the derived value."""

    cpu: QuantityText | None = Field(default=None, description="CPU, e.g. 120 or 119500m.")
    memory: QuantityText | None = Field(default=None, description="Memory, e.g. 1000Gi.")
    pods: int | None = Field(default=None, ge=1, le=100_000, description="Pod slots.")


class NodePool(_Model):
    """A group of identical nodes."""

    name: str = Field(description="Pool name (a DNS label); nodes are <name>-<i>.")
    preset: str | None = Field(
        default=None, description="A hardware preset (gpuplane topo presets)."
    )
    topology_file: str | None = Field(
        default=None,
        description="Hardware YAML or saved `nvidia-smi topo -m` output, relative to the scenario.",
    )
    gpu_model: str | None = Field(default=None, description="GPU model for a topo -m file.")
    count: int = Field(ge=1, le=100_000, description="Number of nodes in the pool.")
    labels: dict[str, str] = Field(default_factory=dict, description="Extra node labels.")
    taints: list[Taint] = Field(default_factory=list)
    allocatable: Allocatable | None = Field(
        default=None,
        description="cpu/memory/pods as the node reports them; else derived from the topology.",
    )
    device_plugin: dict[str, Any] | None = Field(
        default=None,
        description="The NVIDIA device plugin's config for these nodes (version: v1, flags, "
        "sharing.timeSlicing / sharing.mps), as in the ConfigMap the node label "
        "nvidia.com/device-plugin.config selects.",
    )
    mig: MigSection | None = Field(
        default=None,
        description="MIG mode: strategy (mixed|single), config (a mig-parted named config), "
        "dynamic (gpuplane's MIG controller relabels the nodes) and the controller's flags.",
    )
    dra: bool = Field(
        default=False,
        description="NVIDIA's DRA driver publishes the GPUs as ResourceSlices (no device plugin).",
    )
    kubelet: KubeletSection = Field(
        default_factory=KubeletSection,
        description="KubeletConfiguration fields: topologyManagerPolicy, topologyManagerScope, "
        "topologyManagerPolicyOptions, cpuManagerPolicy, memoryManagerPolicy, "
        "reservedSystemCPUs; and the device plugin's gpuAllocationPolicy.",
    )

    @field_validator("name")
    @classmethod
    def _dns_label(cls, value: str) -> str:
        if len(value) > 52 or not re.match(_DNS_LABEL, value):
            # 52: node names <pool>-<i> must stay valid DNS labels (63 characters).
            raise ValueError(
                f"{value!r} is not a DNS label: use at most 52 lowercase letters, digits and "
                "'-', starting and ending with a letter or digit"
            )
        return value

    @model_validator(mode="after")
    def _one_source(self) -> NodePool:
        if (self.preset is None) == (self.topology_file is None):
            raise ValueError("give exactly one of preset or topology_file")
        return self


_PROFILES: TypeAdapter[list[ProfileConfig] | None] = TypeAdapter(list[ProfileConfig] | None)


class ControlPlane(_Model):
    """Scheduler and kubelet settings the twin applies to every node and pod."""

    scheduler_name: str = Field(
        default="default-scheduler",
        min_length=1,
        description="The scheduler the twin runs; pods naming another one stay Pending.",
    )
    pod_initial_backoff_seconds: int = Field(
        default=1, gt=0, description="KubeSchedulerConfiguration podInitialBackoffSeconds."
    )
    pod_max_backoff_seconds: int = Field(
        default=10, gt=0, description="KubeSchedulerConfiguration podMaxBackoffSeconds."
    )
    metrics_interval: Seconds = Field(
        default=30.0, gt=0, description="How often the twin samples metrics, e.g. 30s."
    )
    kube_reserved: dict[str, QuantityText] | str = Field(
        default_factory=dict, description="kubelet --kube-reserved, e.g. cpu=500m,memory=1Gi."
    )
    system_reserved: dict[str, QuantityText] | str = Field(
        default_factory=dict, description="kubelet --system-reserved, e.g. cpu=500m,memory=1Gi."
    )
    eviction_hard: dict[str, str] | str = Field(
        default_factory=lambda: {"memory.available": "100Mi"},
        description="kubelet --eviction-hard; memory.available is taken off allocatable memory.",
    )
    max_pods: int = Field(default=110, ge=1, le=100_000, description="kubelet --max-pods.")
    kubelet_admission_delay: Seconds = Field(
        default=1.0,
        gt=0,
        description="Binding to kubelet admission on nodes with a Topology Manager policy or a "
        "static CPU/memory manager (watch and sync latency), e.g. 1s.",
    )
    scheduler_profiles: list[ProfileConfig] | None = Field(
        default=None,
        min_length=1,
        description="KubeSchedulerConfiguration profiles (schedulerName, plugins, pluginConfig, "
        "percentageOfNodesToScore); unset: gpuplane's default profile named scheduler_name.",
    )

    @field_validator("scheduler_profiles", mode="wrap")
    @classmethod
    def _in_tree_plugins(
        cls, value: object, handler: ValidatorFunctionWrapHandler
    ) -> list[ProfileConfig] | None:
        # The twin's scheduler runs gpuplane's in-tree plugins: profiles are checked against them.
        checked = _PROFILES.validate_python(value, context={REGISTRY_CONTEXT: in_tree_registry()})
        result: list[ProfileConfig] | None = handler(checked)
        return result

    @model_validator(mode="after")
    def _profiles(self) -> ControlPlane:
        if self.scheduler_profiles is not None:
            check_profiles(self.scheduler_profiles, in_tree_registry())
        return self

    @model_validator(mode="after")
    def _backoff_order(self) -> ControlPlane:
        # kube-scheduler config validation: the max back-off may not be below the initial one.
        if self.pod_max_backoff_seconds < self.pod_initial_backoff_seconds:
            raise ValueError(
                "pod_max_backoff_seconds must be greater than or equal to "
                "pod_initial_backoff_seconds"
            )
        return self


class PoissonArrival(_Model):
    """Copies arrive as a Poisson process."""

    rate_per_s: float | None = Field(default=None, gt=0, description="Arrivals per second.")
    mean_interarrival: Seconds | None = Field(
        default=None, gt=0, description="Mean gap between arrivals, e.g. 30s (or rate_per_s)."
    )
    count: int = Field(ge=1, le=10_000_000, description="Number of copies created.")
    start: Seconds = Field(default=0.0, description="When the process starts, e.g. 10m.")

    @model_validator(mode="after")
    def _one_rate(self) -> PoissonArrival:
        _exactly_one(self, ("rate_per_s", "mean_interarrival"))
        return self


class TraceArrivalConfig(_Model):
    """One copy per row of a CSV trace."""

    path: str = Field(min_length=1, description="CSV file, relative to the scenario.")
    time_column: str = Field(min_length=1, description="Column with arrival times.")
    duration_column: str | None = Field(default=None, description="Column with pod run times.")
    time_unit: Literal["ns", "us", "ms", "s", "min", "h"] = Field(
        default="s", description="Unit of numeric times and durations."
    )
    scale: float = Field(
        default=1.0, gt=0, description="Multiplies arrival offsets (0.5 replays twice as fast)."
    )
    start_at: Seconds = Field(default=0.0, description="Twin time of the trace's first row.")
    limit: int | None = Field(default=None, ge=1, description="Use only the first N rows.")


class Arrival(_Model):
    """When copies of the workload's object are created (default: one at 0s)."""

    at: Seconds | None = Field(default=None, description="One copy at this time, e.g. 0s.")
    poisson: PoissonArrival | None = None
    trace: TraceArrivalConfig | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Arrival:
        _exactly_one(self, ("at", "poisson", "trace"))
        return self


class ExponentialRunTime(_Model):
    mean: Seconds = Field(gt=0, description="Mean run time, e.g. 30m.")


class RunTime(_Model):
    """How long each pod's main container runs."""

    fixed: Seconds | None = Field(default=None, gt=0, description="Always this long, e.g. 2h.")
    exponential: ExponentialRunTime | None = None
    until_end: Literal[True] | None = Field(default=None, description="Run until the end.")

    @model_validator(mode="after")
    def _one_kind(self) -> RunTime:
        _exactly_one(self, ("fixed", "exponential", "until_end"))
        return self


class WorkloadEntry(_Model):
    """A Kubernetes object (inline or from a file) plus its arrivals and pod run times."""

    name: str | None = Field(default=None, min_length=1, description="Defaults to the object's.")
    manifest: dict[str, Any] | None = Field(default=None, description="An inline manifest.")
    path: str | None = Field(
        default=None, min_length=1, description="A manifest file (documents split by ---)."
    )
    arrival: Arrival = Field(default_factory=lambda: Arrival(at=0.0))
    duration: RunTime | None = Field(
        default=None, description="Required for Jobs and Pods; Deployments run until the end."
    )
    failure_probability: float = Field(
        default=0.0, ge=0.0, le=1.0, description="Chance a pod's main container exits non-zero."
    )

    @model_validator(mode="after")
    def _one_source(self) -> WorkloadEntry:
        _exactly_one(self, ("manifest", "path"))
        return self


class PriorityClassEntry(_Model):
    """A ``scheduling.k8s.io/v1`` PriorityClass (its top-level fields)."""

    name: str = Field(min_length=1, description="metadata.name, referenced by priorityClassName.")
    value: int = Field(
        ge=-2_147_483_648,
        le=1_000_000_000,
        description="Priority; user classes may not exceed 1e9.",
    )
    globalDefault: bool = Field(default=False, description="Used by pods that name no class.")
    preemptionPolicy: Literal["PreemptLowerPriority", "Never"] = "PreemptLowerPriority"
    description: str = ""


class PolicyUpdate(_Model):
    """A change to the ClusterPolicy during the run (what ``kubectl patch clusterpolicy`` does)."""

    at: Seconds = Field(description="When the change is applied, e.g. 2h.")
    patch: dict[str, Any] = Field(
        description="A JSON merge patch (RFC 7386) applied to the ClusterPolicy manifest, e.g. "
        "{spec: {driver: {version: 550.90.07}}}."
    )


class MigConfigChangeEntry(_Model):
    at: Seconds = Field(description="When the label changes, e.g. 2h.")
    pool: str = Field(description="The MIG pool whose nodes are relabelled.")
    config: str = Field(description="A named mig-parted config, e.g. all-3g.40gb.")


class Scenario(_Model):
    name: str = Field(min_length=1)
    description: str = ""
    node_pools: list[NodePool] = Field(min_length=1)
    control_plane: ControlPlane = Field(default_factory=ControlPlane)
    cluster_policy: dict[str, Any] | None = Field(
        default=None, description="A ClusterPolicy manifest, or {path: file.yaml}."
    )
    priority_classes: list[PriorityClassEntry] = Field(
        default_factory=list,
        description="PriorityClasses of the cluster (system-cluster-critical and "
        "system-node-critical always exist).",
    )
    cluster_policy_updates: list[PolicyUpdate] = Field(
        default_factory=list, description="ClusterPolicy changes during the run (driver upgrades)."
    )
    operator: OperatorSettings = Field(default_factory=OperatorSettings)
    faults: list[FaultSpec] = Field(default_factory=list)
    workloads: list[WorkloadEntry] = Field(default_factory=list)
    serving: ServingSection | None = Field(
        default=None,
        description="LLM services: inference Deployments, their traffic, router and SLO.",
    )
    autoscaling: list[str] = Field(
        default_factory=list,
        description="Files of KEDA ScaledObjects (keda.sh/v1alpha1), relative to the scenario.",
    )
    mig_config_changes: list[MigConfigChangeEntry] = Field(
        default_factory=list,
        description="Relabel a MIG pool's nodes nvidia.com/mig.config=<config> at a time; the "
        "MIG manager drains their MIG pods and applies it.",
    )
    dra: list[str] = Field(
        default_factory=list,
        description="Files of DRA objects (resource.k8s.io/v1 DeviceClass, "
        "ResourceClaimTemplate, ResourceClaim), relative to the scenario.",
    )

    @model_validator(mode="after")
    def _unique_names(self) -> Scenario:
        for what, names in (
            ("node pool", [p.name for p in self.node_pools]),
            ("workload", [w.name for w in self.workloads if w.name is not None]),
        ):
            dupes = sorted({n for n in names if names.count(n) > 1})
            if dupes:
                raise ValueError(f"{what} names must be unique; repeated: {', '.join(dupes)}")
        names = [c.name for c in self.priority_classes]
        if len(set(names)) != len(names):
            raise ValueError("priority class names must be unique")
        if sum(c.globalDefault for c in self.priority_classes) > 1:
            raise ValueError("at most one priority class may be globalDefault")
        if self.cluster_policy_updates and self.cluster_policy is None:
            raise ValueError("cluster_policy_updates need a cluster_policy to change")
        return self

    @model_validator(mode="after")
    def _one_mig_controller(self) -> Scenario:
        # One controller serves every dynamic pool, so its flags are the same for all.
        flags = {
            (m.interval_seconds, m.max_unavailable, m.allow_evict)
            for m in (p.mig for p in self.node_pools)
            if m is not None and m.dynamic
        }
        if len(flags) > 1:
            raise ValueError(
                "pools with mig.dynamic share one MIG controller: give them the same "
                "interval_seconds, max_unavailable and allow_evict"
            )
        return self


def load_scenario(path: Path) -> Scenario:
    """The scenario's shape only; ``gpuplane.k8s.scenario.loader`` reads it completely."""
    text = read_named_file(path, "scenario YAML file")
    return validate_yaml(Scenario, text, str(path))
