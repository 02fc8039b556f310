"""KEDA and the HPA in the twin, reading the cluster's series store through PromQL.

For each ScaledObject the twin runs what a cluster runs:

- KEDA's scale loop every ``pollingInterval``: every trigger is polled (the Prometheus scaler
  evaluates its query on the twin's series store as Prometheus would), and
  ``autoscaler.keda.scale_loop.decide`` may activate the target from zero or deactivate it after
  the cooldown;
- the HPA KEDA created (``hpa_for``), synced every 15 s by ``autoscaler.hpa.controller.decide``:
  its External metrics come from KEDA's metrics server (``external_metric``: a fresh query, the
  fallback), its pods from the target Deployment (readiness as the serving runtime reports it);
  a rescale writes the Deployment's replicas.

Both decisions are pure; this module only gathers their inputs and applies their outputs, and
keeps their state (recommendation history, scale events, KEDA's last active time) between syncs.

What each poll and sync saw is logged for autoscaling_timeseries.csv (``series``): desired and
current replicas, every trigger's value and threshold, and the target service's request rate
and queue length read from the series store as a dashboard would. Logging changes no decision.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from gpuplane.api.pod_phase import PodPhase
from gpuplane.api.pod_phase import PodPhase as HpaPhase
from gpuplane.autoscaler.hpa.controller import HpaSnapshot
from gpuplane.autoscaler.hpa.controller import decide as hpa_decide
from gpuplane.autoscaler.hpa.metrics import MetricsSnapshot
from gpuplane.autoscaler.hpa.pods import ConditionStatus, PodInfo
from gpuplane.autoscaler.hpa.settings import HpaControllerSettings
from gpuplane.autoscaler.hpa.spec import HpaSpec, MetricSourceType
from gpuplane.autoscaler.hpa.state import HpaState
from gpuplane.autoscaler.keda.hpa_generation import hpa_for
from gpuplane.autoscaler.keda.metrics_adapter import external_metric
from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.autoscaler.keda.prometheus_scaler import SeriesStorePrometheus
from gpuplane.autoscaler.keda.scale_loop import KedaSnapshot
from gpuplane.autoscaler.keda.scale_loop import decide as keda_decide
from gpuplane.autoscaler.keda.scalers import Scaler, ScalerPoll, build_scaler
from gpuplane.autoscaler.keda.state import KedaSettings, KedaState
from gpuplane.autoscaler.promql.evaluator import evaluate
from gpuplane.core.kernel import Priority
from gpuplane.twin.autoscaling.summary import AutoscalingSummary, ScaledObjectSummary
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import Pod
from gpuplane.twin.component import Component
from gpuplane.twin.controllers.deployment import DeploymentController
from gpuplane.twin.series import SeriesLog, SeriesRow

HPA_SETTINGS = HpaControllerSettings()
KEDA_SETTINGS = KedaSettings()


@dataclass(slots=True)
class _Scaled:
    so: ScaledObjectIn
    scalers: tuple[Scaler, ...]
    hpa: HpaSpec
    keda_state: KedaState = field(default_factory=KedaState)
    hpa_state: HpaState = field(default_factory=HpaState)
    created_s: float = 0.0
    scale_events: int = 0
    history: list[tuple[float, int]] = field(default_factory=list)


class Autoscaling(Component):
    def __init__(
        self,
        cluster: Cluster,
        deployments: DeploymentController,
        objects: tuple[ScaledObjectIn, ...],
        services: Mapping[str, str] | None = None,
    ) -> None:
        self.c = cluster
        self.deployments = deployments
        self.services = dict(services or {})  # target Deployment key -> serving service
        self.log = SeriesLog()
        api = SeriesStorePrometheus(cluster.tsdb)
        self.scaled: list[_Scaled] = []
        for so in objects:
            scalers = tuple(build_scaler(t, i, api) for i, t in enumerate(so.spec.triggers))
            self.scaled.append(_Scaled(so, scalers, hpa_for(so, scalers)))

    def start(self, until_s: float) -> None:
        self.until_s = until_s
        for s in self.scaled:
            self._every(float(s.so.spec.pollingInterval), partial(self._keda, s), "keda")
            self._every(HPA_SETTINGS.sync_period_s, partial(self._hpa, s), "hpa")

    def _every(self, period: float, fn: Callable[[], None], label: str) -> None:
        def tick() -> None:
            fn()
            if self.c.now + period <= self.until_s:
                self.c.loop.after(period, tick, priority=Priority.CONTROLLER, label=label)

        self.c.loop.after(period, tick, priority=Priority.CONTROLLER, label=label)

    # ----- the target -----
    def _key(self, s: _Scaled) -> str:
        return f"{s.so.metadata.namespace}/{s.so.spec.scaleTargetRef.name}"

    def _pods(self, s: _Scaled) -> list[Pod]:
        state = self.c.store.deployments.get(self._key(s))
        if state is None:
            return []
        rs = self.c.store.replica_sets.get(f"{state.namespace}/{state.replica_set}")
        if rs is None:
            return []
        return [self.c.store.pods[u] for u in rs.pods if self.c.store.pods[u].is_active]

    def _replicas(self, s: _Scaled) -> int:
        state = self.c.store.deployments.get(self._key(s))
        return state.replicas if state is not None else 0

    def _scale(self, s: _Scaled, replicas: int, why: str) -> None:
        if replicas == self._replicas(s):
            return
        self.deployments.scale(self._key(s), replicas, why)
        s.scale_events += 1
        s.history.append((self.c.now, replicas))
        self.c.count("autoscaler_scale_events")

    # ----- KEDA -----
    def _keda(self, s: _Scaled) -> None:
        now = self.c.now
        polls = tuple(
            sc.poll(now) if t.type == "prometheus" else None
            for sc, t in zip(s.scalers, s.so.spec.triggers, strict=True)
        )
        snap = KedaSnapshot(now, s.so, self._replicas(s), polls, s.created_s, s.keda_state)
        decision = keda_decide(snap, KEDA_SETTINGS)
        s.keda_state = decision.state
        self._log_poll(s, polls, decision.scale_to)
        if decision.scale_to is not None:
            self._scale(s, decision.scale_to, "; ".join(decision.events) or "KEDA")

    # ----- the HPA -----
    def _hpa(self, s: _Scaled) -> None:
        now = self.c.now
        current = self._replicas(s)
        if current == 0:
            return  # the HPA does nothing at zero; KEDA activates the target
        pods = self._pods(s)
        ready = sum(1 for p in pods if p.conditions.get("Ready"))
        external: dict[str, tuple[int, ...]] = {}
        errors: dict[str, str] = {}
        fresh: dict[str, ScalerPoll] = {}
        for sc in s.scalers:
            spec = sc.metric_spec(s.so.metadata.name)
            if spec.type is MetricSourceType.EXTERNAL:
                fresh[spec.metric_name] = sc.poll(now)
        for m in s.hpa.metrics:
            if m.type is not MetricSourceType.EXTERNAL:
                continue
            answer = external_metric(
                s.so, s.scalers, m.metric_name, fresh, s.keda_state, current, ready
            )
            s.keda_state = answer.state
            if answer.values_milli is not None:
                external[m.metric_name] = answer.values_milli
            elif answer.error is not None:
                errors[m.metric_name] = answer.error
        snap = HpaSnapshot(
            now_s=now,
            spec=s.hpa,
            spec_replicas=current,
            status_replicas=len(pods),
            pods=tuple(_pod_info(p) for p in pods),
            metrics=MetricsSnapshot(external=external, external_errors=errors),
            state=s.hpa_state,
        )
        decision = hpa_decide(snap, HPA_SETTINGS)
        s.hpa_state = decision.state
        entity = self._entity(s)
        self.log.record(now, entity, "desired_replicas", float(decision.desired_replicas))
        self.log.record(now, entity, "current_replicas", float(current))
        if decision.rescale:
            reason = next((e.message for e in decision.events), "HPA rescale")
            self._scale(s, decision.desired_replicas, reason)

    # ----- what the scalers saw -----
    def _entity(self, s: _Scaled) -> str:
        return f"ScaledObject {s.so.metadata.namespace}/{s.so.metadata.name}"

    def _log_poll(
        self, s: _Scaled, polls: tuple[ScalerPoll | None, ...], scale_to: int | None
    ) -> None:
        now, entity = self.c.now, self._entity(s)
        current = self._replicas(s)
        self.log.record(now, entity, "current_replicas", float(current))
        self.log.record(
            now, entity, "desired_replicas", float(current if scale_to is None else scale_to)
        )
        for i, (poll, t) in enumerate(zip(polls, s.so.spec.triggers, strict=True)):
            name = f"trigger.{t.name or i}"
            if poll is not None and poll.value_milli is not None:
                self.log.record(now, entity, f"{name}.value", poll.value_milli / 1000.0)
            threshold = _number(t.metadata.get("threshold"))
            if threshold is not None:
                self.log.record(now, entity, f"{name}.threshold", threshold)
        service = self.services.get(self._key(s))
        if service is not None:
            sel = f'{{service="{service}"}}'
            for metric, query in (
                ("request_rate_rps", f"sum(rate(vllm:num_incoming_requests_total{sel}[1m]))"),
                ("queue_length", f"sum(vllm:num_requests_waiting{sel})"),
            ):
                value = _scalar(query, self.c, now)
                if value is not None:
                    self.log.record(now, entity, metric, value)

    def series(self, grid: Sequence[float]) -> dict[str, list[SeriesRow]]:
        return {"autoscaling_timeseries.csv": self.log.on_grid(grid)}

    def summary(self) -> AutoscalingSummary:
        return AutoscalingSummary(
            tuple(
                ScaledObjectSummary(
                    scaled_object=f"{s.so.metadata.namespace}/{s.so.metadata.name}",
                    target=self._key(s),
                    scale_events=s.scale_events,
                    replicas_at_end=self._replicas(s),
                    max_replicas_seen=max((r for _, r in s.history), default=self._replicas(s)),
                )
                for s in self.scaled
            )
        )


def _pod_info(p: Pod) -> PodInfo:
    ready = p.conditions.get("Ready")
    phase = {
        PodPhase.PENDING: HpaPhase.PENDING,
        PodPhase.RUNNING: HpaPhase.RUNNING,
        PodPhase.SUCCEEDED: HpaPhase.SUCCEEDED,
        PodPhase.FAILED: HpaPhase.FAILED,
    }[p.phase]
    return PodInfo(
        name=p.name,
        phase=phase,
        ready=ConditionStatus.TRUE if ready else ConditionStatus.FALSE,
        ready_transition_s=p.started_s or p.created_s,
        start_s=p.started_s,
        deleted=p.is_deleted,
    )


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else math.nan
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _scalar(query: str, cluster: Cluster, now: float) -> float | None:
    """The first sample of an instant query on the cluster's series store (None: no sample)."""
    samples = getattr(evaluate(query, cluster.tsdb, now), "samples", ())
    if not samples:
        return None
    x = float(samples[0].value)
    return x if math.isfinite(x) else None
