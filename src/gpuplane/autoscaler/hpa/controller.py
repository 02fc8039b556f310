"""One HPA sync (``horizontal.go: reconcileAutoscaler``) as a pure decision.

``decide(snapshot, settings)`` reads the HPA spec, the scale target's replica counts, the pods of
its selector, what the metrics APIs answer and the controller's remembered state, and returns the
replica count to write, the status conditions, metric statuses, events and the new state. The
caller applies it: writes the scale, keeps ``decision.state`` for the next sync 15 s later.

The order of the real reconcile is kept, because it decides which condition a user sees:

1. AbleToScale=True/SucceededGetScale; the first sync records the current count as a
   recommendation.
2. current == 0 with minReplicas != 0: ScalingActive=False/ScalingDisabled, no change (this is
   how a workload scaled to zero by hand, or by KEDA, turns the HPA off).
3. current above max or below min: go straight to the bound, no metrics, no stabilization.
4. Otherwise every metric proposes; failed metrics are skipped unless all failed, or some failed
   and the others would scale down (then nothing changes and the first failure's condition is
   set); else ScalingActive=True/ValidMetricFound and the largest proposal is normalized.
5. If the count changes: AbleToScale=True/SucceededRescale, a SuccessfulRescale event, and (with
   a behavior) a scale event for the rate limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gpuplane.autoscaler.hpa.compute import (
    MetricFailure,
    MetricInputs,
    MetricStatus,
    compute_metric,
)
from gpuplane.autoscaler.hpa.metrics import MetricsSnapshot
from gpuplane.autoscaler.hpa.normalize import (
    Recommendation,
    convert_with_behavior_rate,
    convert_with_rules,
    stabilize_legacy,
    stabilize_with_behaviors,
    store_scale_event,
)
from gpuplane.autoscaler.hpa.pods import ConditionStatus, PodInfo
from gpuplane.autoscaler.hpa.replica_calculator import PodContext, Tolerances
from gpuplane.autoscaler.hpa.settings import HpaControllerSettings
from gpuplane.autoscaler.hpa.spec import HpaSpec
from gpuplane.autoscaler.hpa.state import Condition, ConditionType, HpaState, set_condition

_TRUE, _FALSE = ConditionStatus.TRUE, ConditionStatus.FALSE


@dataclass(frozen=True, slots=True)
class HpaSnapshot:
    """Everything one sync reads. ``spec_replicas``/``status_replicas`` are the scale
    subresource's ``spec.replicas`` and ``status.replicas``."""

    now_s: float
    spec: HpaSpec
    spec_replicas: int
    status_replicas: int
    pods: tuple[PodInfo, ...] = ()
    metrics: MetricsSnapshot = field(default_factory=MetricsSnapshot)
    state: HpaState = field(default_factory=HpaState)


@dataclass(frozen=True, slots=True)
class HpaEvent:
    type: str  # Normal | Warning
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class HpaDecision:
    """The outcome of one sync. ``rescale`` says whether to write ``desired_replicas`` to the
    scale target; ``desired_replicas`` is what the HPA's ``status.desiredReplicas`` shows (when
    every metric failed it keeps the previous status value). ``error`` is the error the sync
    returns (the controller logs it and retries on the next sync)."""

    current_replicas: int
    desired_replicas: int
    rescale: bool
    conditions: tuple[Condition, ...]
    metric_statuses: tuple[MetricStatus, ...]
    events: tuple[HpaEvent, ...]
    state: HpaState
    error: str | None = None

    def condition(self, kind: ConditionType) -> Condition | None:
        return next((c for c in self.conditions if c.type is kind), None)


def tolerances_for(spec: HpaSpec, settings: HpaControllerSettings) -> Tolerances:
    """``tolerancesForHpa``: the cluster tolerance, or the behavior's when the gate allows it."""
    t = Tolerances(settings.tolerance, settings.tolerance)
    if spec.behavior is None or not settings.configurable_tolerance:
        return t
    down, up = spec.behavior.scale_down.tolerance, spec.behavior.scale_up.tolerance
    return Tolerances(t.scale_down if down is None else down, t.scale_up if up is None else up)


class _Sync:
    """The mutable scratch of one reconcile; never escapes :func:`decide`."""

    def __init__(self, snap: HpaSnapshot) -> None:
        self.snap = snap
        self.now = snap.now_s
        self.state = snap.state
        self.conditions = snap.state.conditions
        self.events: list[HpaEvent] = []
        self.statuses: tuple[MetricStatus, ...] = ()

    def cond(self, kind: ConditionType, status: ConditionStatus, reason: str, msg: str) -> None:
        self.conditions = set_condition(self.conditions, kind, status, reason, msg, self.now)


def _compute_metrics(sync: _Sync, settings: HpaControllerSettings) -> tuple[int, str, str | None]:
    """``computeReplicasForMetrics``: (replicas or -1, metric name, error)."""
    snap = sync.snap
    spec = snap.spec
    pods = PodContext(
        snap.pods,
        snap.now_s,
        settings.cpu_initialization_period_s,
        settings.initial_readiness_delay_s,
        settings.pod_level_resources,
        spec.namespace,
    )
    inputs = MetricInputs(
        snap.spec_replicas, snap.status_replicas, tolerances_for(spec, settings), pods, snap.metrics
    )
    metrics = spec.effective_metrics()
    replicas, name = 0, ""
    statuses: list[MetricStatus] = []
    failures: list[MetricFailure] = []
    for m in metrics:
        try:
            result = compute_metric(m, inputs)
        except MetricFailure as failure:
            sync.events.append(HpaEvent("Warning", failure.reason, failure.condition_error))
            failures.append(failure)
            continue
        statuses.append(result.status)
        if replicas == 0 or result.replicas > replicas:
            replicas, name = result.replicas, result.name
    sync.statuses = tuple(statuses)
    error = None
    if failures:
        first = failures[0]
        error = (
            f"invalid metrics ({len(failures)} invalid out of {len(metrics)}), "
            f"first error is: {first.error}"
        )
    if len(failures) >= len(metrics) or (failures and replicas < snap.spec_replicas):
        first = failures[0]
        sync.cond(ConditionType.SCALING_ACTIVE, _FALSE, first.reason, first.condition_message)
        return -1, "", error
    sync.cond(
        ConditionType.SCALING_ACTIVE,
        _TRUE,
        "ValidMetricFound",
        f"the HPA was able to successfully calculate a replica count from {name}",
    )
    return replicas, name, error


def _normalize(sync: _Sync, settings: HpaControllerSettings, current: int, desired: int) -> int:
    spec, now, state = sync.snap.spec, sync.now, sync.state
    min_r, max_r = spec.effective_min(), spec.max_replicas
    if spec.behavior is None:
        stabilized, recs = stabilize_legacy(
            state.recommendations, desired, now, settings.downscale_stabilization_s
        )
        if stabilized != desired:
            reason, message = (
                "ScaleDownStabilized",
                (
                    "recent recommendations were higher than current one, applying the highest "
                    "recent recommendation"
                ),
            )
        else:
            reason, message = "ReadyForNewScale", "recommended size matches current size"
        limited = convert_with_rules(current, stabilized, min_r, max_r)
    else:
        behavior = spec.behavior
        down_window = behavior.scale_down.stabilization_window_s
        stabilized, reason, message, recs = stabilize_with_behaviors(
            state.recommendations,
            desired,
            current,
            float(behavior.scale_up.stabilization_window_s or 0),
            settings.downscale_stabilization_s if down_window is None else float(down_window),
            now,
        )
        if stabilized == desired:
            reason, message = "ReadyForNewScale", "recommended size matches current size"
        limited = convert_with_behavior_rate(
            current,
            stabilized,
            min_r,
            max_r,
            behavior,
            state.scale_up_events,
            state.scale_down_events,
            now,
        )
    sync.state = replace(state, recommendations=recs)
    sync.cond(ConditionType.ABLE_TO_SCALE, _TRUE, reason, message)
    limited_status = _FALSE if limited.replicas == stabilized else _TRUE
    sync.cond(ConditionType.SCALING_LIMITED, limited_status, limited.reason, limited.message)
    return limited.replicas


def _store_event(sync: _Sync, current: int, desired: int) -> None:
    behavior = sync.snap.spec.behavior
    if behavior is None:
        return
    st = sync.state
    if desired > current:
        up = store_scale_event(behavior, st.scale_up_events, desired - current, sync.now)
        sync.state = replace(st, scale_up_events=up)
    else:
        down = store_scale_event(behavior, st.scale_down_events, desired - current, sync.now)
        sync.state = replace(st, scale_down_events=down)


def decide(snapshot: HpaSnapshot, settings: HpaControllerSettings) -> HpaDecision:
    """One reconcile of one HPA."""
    sync = _Sync(snapshot)
    spec = snapshot.spec
    sync.cond(
        ConditionType.ABLE_TO_SCALE,
        _TRUE,
        "SucceededGetScale",
        "the HPA controller was able to get the target's current scale",
    )
    current = snapshot.spec_replicas
    if not sync.state.recommendations:
        sync.state = replace(sync.state, recommendations=(Recommendation(current, sync.now),))
    min_r = spec.effective_min()
    desired, reason, error, rescale = 0, "", None, True
    if current == 0 and min_r != 0:
        rescale = False
        sync.cond(
            ConditionType.SCALING_ACTIVE,
            _FALSE,
            "ScalingDisabled",
            "scaling is disabled since the replica count of the target is zero",
        )
    elif current > spec.max_replicas:
        desired, reason = spec.max_replicas, "Current number of replicas above Spec.MaxReplicas"
    elif current < min_r:
        desired, reason = min_r, "Current number of replicas below Spec.MinReplicas"
    else:
        proposed, metric_name, error = _compute_metrics(sync, settings)
        if error is not None and proposed == -1:
            message = (
                f"failed to compute desired number of replicas based on listed metrics for "
                f"{spec.reference()}: {error}"
            )
            sync.events.append(HpaEvent("Warning", "FailedComputeMetricsReplicas", error))
            return _finish(sync, current, sync.state.desired_replicas, False, message)
        desired = max(desired, proposed)
        if desired > current:
            reason = f"{metric_name if proposed > 0 else ''} above target"
        elif desired < current:
            reason = "All metrics below target"
        desired = _normalize(sync, settings, current, desired)
        rescale = desired != current
    if rescale:
        sync.cond(
            ConditionType.ABLE_TO_SCALE,
            _TRUE,
            "SucceededRescale",
            f"the HPA controller was able to update the target scale to {desired}",
        )
        sync.events.append(
            HpaEvent("Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
        )
        _store_event(sync, current, desired)
        sync.state = replace(sync.state, last_scale_s=sync.now)
    else:
        desired = current
    return _finish(sync, current, desired, rescale, error)


def _finish(
    sync: _Sync, current: int, desired: int, rescale: bool, error: str | None
) -> HpaDecision:
    state = replace(sync.state, conditions=sync.conditions, desired_replicas=desired)
    return HpaDecision(
        current_replicas=current,
        desired_replicas=desired,
        rescale=rescale,
        conditions=sync.conditions,
        metric_statuses=sync.statuses,
        events=tuple(sync.events),
        state=state,
        error=error,
    )
