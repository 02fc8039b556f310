"""``gpuplane autoscale hpa-check --hpa HPA.yaml --metrics VALUES.yaml``: one sync of a real
HorizontalPodAutoscaler against the values the metrics APIs would answer now.

The values file (YAML or JSON) says what the controller would read at this sync:

- ``replicas``: the scale target's ``spec.replicas`` (``statusReplicas``: its
  ``status.replicas``, default the same);
- ``pods``: the target's pods, each ``name``, ``ready`` (default true), ``phase`` (Running),
  ``startedSecondsAgo`` (600) and ``requests`` (resource -> quantity, per pod); default:
  ``replicas`` Running, Ready pods named ``<target>-<i>`` with no requests;
- ``metrics``: ``resource`` (resource -> pod -> usage, what metrics-server reports),
  ``pods`` (metric -> pod -> value, custom metrics API), ``object`` (``Kind/name/metric`` ->
  value), ``external`` (metric -> a value or a list of values, external metrics API, which
  KEDA answers);
- ``desiredReplicas``: the HPA's ``status.desiredReplicas`` before this sync (default
  ``replicas``).

The answer is the HPA's ``status`` after the sync as the controller writes it
(``currentReplicas``, ``desiredReplicas``, ``currentMetrics``, ``conditions``), plus
``rescale`` (whether it writes the new count to the target) and the events it records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpuplane.api.pod_phase import PodPhase
from gpuplane.api.quantity import parse_quantity
from gpuplane.autoscaler.hpa.controller import HpaSnapshot, decide
from gpuplane.autoscaler.hpa.metrics import MetricsSnapshot, ObjectMetricValue
from gpuplane.autoscaler.hpa.pods import ConditionStatus, ContainerInfo, PodInfo, PodMetric
from gpuplane.autoscaler.hpa.settings import HpaControllerSettings
from gpuplane.autoscaler.hpa.spec import HpaSpec
from gpuplane.autoscaler.hpa.state import HpaState
from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_named_file
from gpuplane.core.validation import validate_model
from gpuplane.k8s.field_errors import relocate
from gpuplane.k8s.manifests.hpa import hpa_status
from gpuplane.k8s.yaml_documents import read_documents

NOW_S = 10_000.0
METRIC_WINDOW_S = 60.0
Quantity = str | int | float


def _milli(value: Quantity) -> int:
    """A quantity in milli-units; ValueError (which pydantic locates) when it is not one."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a quantity")
    try:
        milli = parse_quantity(str(value)).milli_value()
    except InputError as exc:
        raise ValueError(f"{value!r} is not a quantity ({exc.problem})") from None
    if milli < 0:
        raise ValueError(f"must not be negative, got {value!r}")
    return milli


class PodIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1)
    ready: bool = True
    phase: Literal["Pending", "Running", "Succeeded", "Failed"] = "Running"
    startedSecondsAgo: float = Field(600.0, ge=0, le=NOW_S)
    requests: dict[str, Quantity] = Field(default_factory=dict)

    @field_validator("requests")
    @classmethod
    def _quantities(cls, v: dict[str, Quantity]) -> dict[str, Quantity]:
        for q in v.values():
            _milli(q)
        return v


class MetricsIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    resource: dict[str, dict[str, Quantity]] = Field(default_factory=dict)
    pods: dict[str, dict[str, Quantity]] = Field(default_factory=dict)
    object: dict[str, Quantity] = Field(default_factory=dict)
    external: dict[str, Quantity | list[Quantity]] = Field(default_factory=dict)

    @field_validator("object")
    @classmethod
    def _object_keys(cls, v: dict[str, Quantity]) -> dict[str, Quantity]:
        for key in v:
            if len(key.split("/")) != 3 or not all(key.split("/")):
                raise ValueError(f"key {key!r} is not Kind/name/metric")
        return v


class ValuesIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    replicas: int = Field(ge=0, le=150_000)
    statusReplicas: int | None = Field(None, ge=0, le=150_000)
    desiredReplicas: int | None = Field(None, ge=0, le=150_000)
    pods: list[PodIn] | None = None
    metrics: MetricsIn = Field(default_factory=MetricsIn)


def load_values(path: Path) -> ValuesIn:
    source = str(path)
    text = read_named_file(path, "metric values YAML file")
    docs = [d for d in read_documents(text, source) if d.data is not None]
    if len(docs) != 1:
        raise InputError(
            f"the file holds {len(docs)} documents",
            expected="one mapping with replicas, pods and metrics",
            location=Location(source, 1),
        )
    try:
        values = validate_model(ValuesIn, docs[0].data)
        for key in ("resource", "pods", "object", "external"):
            for name, amounts in getattr(values.metrics, key).items():
                items = amounts.values() if isinstance(amounts, dict) else [amounts]
                for a in items:
                    for q in a if isinstance(a, list) else [a]:
                        _check(q, f"metrics.{key}.{name}")
    except InputError as err:
        raise relocate(err, source, docs[0].line_of) from None
    return values


def _check(value: Quantity, field: str) -> None:
    try:
        _milli(value)
    except (ValueError, InputError) as exc:
        raise InputError(
            f"{value!r} is not a quantity: {exc}",
            expected="a non-negative quantity such as 250m, 3 or 1.5k",
            location=Location(field=field),
        ) from None


def _pods(spec: HpaSpec, values: ValuesIn) -> tuple[PodInfo, ...]:
    given = values.pods
    if given is None:
        target = spec.scale_target_ref.name
        given = [PodIn(name=f"{target}-{i}") for i in range(values.replicas)]
    return tuple(
        PodInfo(
            name=p.name,
            phase=PodPhase(p.phase),
            ready=ConditionStatus.TRUE if p.ready else ConditionStatus.FALSE,
            ready_transition_s=NOW_S - p.startedSecondsAgo,
            start_s=NOW_S - p.startedSecondsAgo,
            containers=(
                ContainerInfo("app", tuple((r, _milli(q)) for r, q in sorted(p.requests.items()))),
            ),
        )
        for p in given
    )


def _samples(per_pod: dict[str, Quantity]) -> dict[str, PodMetric]:
    return {pod: PodMetric(_milli(v), NOW_S, METRIC_WINDOW_S) for pod, v in per_pod.items()}


def _metrics(m: MetricsIn) -> MetricsSnapshot:
    objects = {
        tuple(key.split("/")): ObjectMetricValue(_milli(v), NOW_S) for key, v in m.object.items()
    }
    external = {
        name: tuple(_milli(x) for x in (v if isinstance(v, list) else [v]))
        for name, v in m.external.items()
    }
    return MetricsSnapshot(
        resource={r: _samples(p) for r, p in m.resource.items()},
        pods={n: _samples(p) for n, p in m.pods.items()},
        objects={(k[0], k[1], k[2]): v for k, v in objects.items()},
        external=external,
    )


def check_hpa(spec: HpaSpec, values: ValuesIn) -> dict[str, Any]:
    """One sync of ``spec`` on ``values``: the HPA's status, rescale and events."""
    status_replicas = values.replicas if values.statusReplicas is None else values.statusReplicas
    previous = values.replicas if values.desiredReplicas is None else values.desiredReplicas
    snapshot = HpaSnapshot(
        NOW_S,
        spec,
        values.replicas,
        status_replicas,
        _pods(spec, values),
        _metrics(values.metrics),
        HpaState(desired_replicas=previous),
    )
    decision = decide(snapshot, HpaControllerSettings())
    status = hpa_status(
        spec,
        decision.current_replicas,
        decision.desired_replicas,
        decision.metric_statuses,
        decision.conditions,
    )
    out: dict[str, Any] = {"status": status, "rescale": decision.rescale}
    out["events"] = [
        {"type": e.type, "reason": e.reason, "message": e.message} for e in decision.events
    ]
    if decision.error is not None:
        out["error"] = decision.error
    return out
