"""The HPA KEDA creates for a ScaledObject (``controllers/keda/hpa.go``).

- name ``keda-hpa-<scaledobject>`` unless ``advanced.horizontalPodAutoscalerConfig.name``;
- ``minReplicas`` = ``minReplicaCount`` if > 0 else 1 (the HPA can not hold zero: scaling to
  and from zero is KEDA's own loop); ``maxReplicas`` = ``maxReplicaCount`` (default 100);
  a ``paused-replicas`` annotation pins both (0 becomes 1);
- one metric per trigger, External metrics labelled ``scaledobject.keda.sh/name=<name>``, sorted
  by metric source type (External before Resource), as KEDA sorts them;
- with ``scalingModifiers`` every External metric is replaced by one ``composite-metric`` with
  the modifiers' target (AverageValue unless ``metricType: Value``);
- ``behavior`` from ``advanced.horizontalPodAutoscalerConfig.behavior``; the ``paused-scale-in``
  / ``paused-scale-out`` annotations set that direction's ``selectPolicy`` to Disabled.
"""

from __future__ import annotations

from dataclasses import replace

from gpuplane.autoscaler.hpa.spec import (
    Behavior,
    HpaSpec,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    ObjectReference,
    ScalingRules,
    SelectPolicy,
)
from gpuplane.autoscaler.keda.model import (
    PAUSED_REPLICAS_ANNOTATION,
    PAUSED_SCALE_IN_ANNOTATION,
    PAUSED_SCALE_OUT_ANNOTATION,
    ScaledObjectIn,
)
from gpuplane.autoscaler.keda.scalers import OWNER_LABEL, Scaler, target_milli

COMPOSITE_METRIC = "composite-metric"


def composite_metric(so: ScaledObjectIn) -> MetricSpec | None:
    sm = so.modifiers()
    if sm is None or not sm.target:
        return None
    target = float(sm.target)
    if target <= 0:
        return None
    milli = target_milli(target)
    if sm.metricType == "Value":
        goal = MetricTarget(MetricTargetType.VALUE, value_milli=milli)
    else:
        goal = MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value_milli=milli)
    return MetricSpec(
        MetricSourceType.EXTERNAL,
        goal,
        metric_name=COMPOSITE_METRIC,
        selector=((OWNER_LABEL, so.metadata.name),),
    )


def _behavior(so: ScaledObjectIn) -> Behavior | None:
    advanced = so.spec.advanced
    config = advanced.horizontalPodAutoscalerConfig if advanced else None
    behavior = config.behavior.to_behavior() if config and config.behavior else None
    paused_in = PAUSED_SCALE_IN_ANNOTATION in so.metadata.annotations
    paused_out = PAUSED_SCALE_OUT_ANNOTATION in so.metadata.annotations
    if not (paused_in or paused_out):
        return behavior
    up = behavior.scale_up if behavior else None
    down = behavior.scale_down if behavior else None
    if paused_in:
        down = replace(down or ScalingRules(), select_policy=SelectPolicy.DISABLED)
    if paused_out:
        up = replace(up or ScalingRules(), select_policy=SelectPolicy.DISABLED)
    return Behavior.of(up, down)


def hpa_for(so: ScaledObjectIn, scalers: tuple[Scaler, ...]) -> HpaSpec:
    """The HPA spec KEDA would create for ``so`` whose triggers became ``scalers``."""
    metrics = [s.metric_spec(so.metadata.name) for s in scalers]
    metrics.sort(key=lambda m: m.type.value)  # Go sorts by the MetricSourceType string
    composite = composite_metric(so)
    if composite is not None:
        metrics = [m for m in metrics if m.type is not MetricSourceType.EXTERNAL] + [composite]
    low, high = so.hpa_min_replicas(), so.hpa_max_replicas()
    paused = so.metadata.annotations.get(PAUSED_REPLICAS_ANNOTATION)
    if paused is not None and paused.strip().isdigit():
        low = high = max(1, int(paused))
    target = so.spec.scaleTargetRef
    return HpaSpec(
        max_replicas=high,
        min_replicas=low,
        metrics=tuple(metrics),
        behavior=_behavior(so),
        name=so.hpa_name(),
        namespace=so.metadata.namespace,
        scale_target_ref=ObjectReference(target.kind, target.name, target.apiVersion),
    )
