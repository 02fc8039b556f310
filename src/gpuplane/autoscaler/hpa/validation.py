"""The API server's checks of an HPA spec (``pkg/apis/autoscaling/validation``), so a spec the
twin runs is one a real cluster would accept.

- ``maxReplicas`` >= 1 and >= ``minReplicas``;
- ``minReplicas`` >= 1, or 0 only with the HPAScaleToZero gate *and* at least one Object or
  External metric (a Resource or Pods metric has no pods to read at zero replicas);
- every target is positive, of a type its source allows (Resource: Utilization or AverageValue;
  Pods: AverageValue; Object and External: Value or AverageValue), with its value set.
"""

from __future__ import annotations

from gpuplane.autoscaler.hpa.settings import HpaControllerSettings
from gpuplane.autoscaler.hpa.spec import HpaSpec, MetricSourceType, MetricSpec, MetricTargetType
from gpuplane.core.errors import InputError, Location

_ALLOWED = {
    MetricSourceType.RESOURCE: (MetricTargetType.UTILIZATION, MetricTargetType.AVERAGE_VALUE),
    MetricSourceType.CONTAINER_RESOURCE: (
        MetricTargetType.UTILIZATION,
        MetricTargetType.AVERAGE_VALUE,
    ),
    MetricSourceType.PODS: (MetricTargetType.AVERAGE_VALUE,),
    MetricSourceType.OBJECT: (MetricTargetType.VALUE, MetricTargetType.AVERAGE_VALUE),
    MetricSourceType.EXTERNAL: (MetricTargetType.VALUE, MetricTargetType.AVERAGE_VALUE),
}


def _fail(problem: str, field: str, expected: str | None = None) -> InputError:
    return InputError(problem, expected=expected, location=Location(field=field))


def _check_target(m: MetricSpec, field: str) -> None:
    t = m.target
    if t.type not in _ALLOWED[m.type]:
        allowed = " or ".join(a.value for a in _ALLOWED[m.type])
        raise _fail(
            f"target type {t.type.value} is not allowed for {m.type.value} metrics",
            f"{field}.type",
            allowed,
        )
    value = {
        MetricTargetType.UTILIZATION: t.average_utilization,
        MetricTargetType.VALUE: t.value_milli,
        MetricTargetType.AVERAGE_VALUE: t.average_value_milli,
    }[t.type]
    if value is None:
        raise _fail(f"a {t.type.value} target needs its value", field)
    if value <= 0:
        raise _fail(f"target {value} must be positive", field, "a target greater than 0")


def validate_hpa_spec(spec: HpaSpec, settings: HpaControllerSettings) -> HpaSpec:
    """``spec`` if the API server would accept it, else a located InputError."""
    if spec.max_replicas < 1:
        raise _fail(
            f"maxReplicas {spec.max_replicas} must be greater than or equal to 1",
            "spec.maxReplicas",
        )
    low = spec.effective_min()
    metrics = spec.effective_metrics()
    if low < 0 or (low == 0 and not settings.scale_to_zero):
        floor = 0 if settings.scale_to_zero else 1
        raise _fail(
            f"minReplicas {low} must be greater than or equal to {floor}",
            "spec.minReplicas",
            None
            if settings.scale_to_zero
            else "minReplicas >= 1 (0 needs the HPAScaleToZero gate)",
        )
    if low == 0 and not any(
        m.type in (MetricSourceType.OBJECT, MetricSourceType.EXTERNAL) for m in metrics
    ):
        raise _fail(
            "must specify at least one Object or External metric to support scaling to zero "
            "replicas",
            "spec.metrics",
        )
    if spec.max_replicas < low:
        raise _fail(
            f"maxReplicas {spec.max_replicas} must be greater than or equal to minReplicas {low}",
            "spec.maxReplicas",
        )
    for i, m in enumerate(metrics):
        _check_target(m, f"spec.metrics[{i}].target")
    return spec
