"""gpuplane's SLO-aware scaler in the twin: the pure ``autoscaler.slo.decide`` fed every sync
period with what a real deployment of it reads.

- Replicas: Ready pods, pods still loading (with the ready time their engine reported), and
  pods not yet started (loading from their creation, at the cold-start estimate).
- Signals: the KEDA external scaler's own queries (``autoscaler.slo.queries``, over the router's
  arrival counter and the engines' vLLM series) answered by gpuplane's PromQL over the cluster's
  series store (``promql_source``) and read by the same rules (``autoscaler.slo.signals``), so
  a run shows what ``deploy render serving`` installs. ``signals: oracle`` adds what only the
  twin knows (``oracle_signals``).
- Capacity: ``serving.engine_capacity`` fits the analytic capacity model's per-replica figures to
  the calibrated step-time model and memory plan of the service's engines.

Each sync's inputs and decision are logged for autoscaling_timeseries.csv (``series``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuplane.autoscaler.slo.capacity import CapacityModel, PoolRole, SloTargets
from gpuplane.autoscaler.slo.queries import SignalQueries, default_queries
from gpuplane.autoscaler.slo.scaler import decide
from gpuplane.autoscaler.slo.signals import SignalMemory, read_signals
from gpuplane.autoscaler.slo.snapshot import (
    LoadingReplica,
    PoolMemory,
    PoolSignals,
    PoolSnapshot,
    ReplicaStates,
    SloSnapshot,
)
from gpuplane.core.kernel import Priority
from gpuplane.twin.autoscaling.oracle_signals import arrival_dispersion, with_oracle
from gpuplane.twin.autoscaling.promql_source import TwinPromql
from gpuplane.twin.autoscaling.summary import SloScalerSummary, SloScalingSummary
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.component import Component
from gpuplane.twin.controllers.deployment import DeploymentController
from gpuplane.twin.scenario.serving_spec import SignalSource, SloScalerSpec
from gpuplane.twin.series import SeriesLog, SeriesRow
from gpuplane.twin.serving.runtime import ServingRuntime

__all__ = ["SloScaling", "arrival_dispersion", "twin_queries"]


def twin_queries(service: str) -> SignalQueries:
    """The live scaler's queries with the twin's labels: the engines' and the router's series
    carry the service's name."""
    sel = f'service="{service}"'
    return default_queries(sel, arrival_selector=sel)


@dataclass(slots=True)
class _Scaler:
    spec: SloScalerSpec
    capacity: CapacityModel | None = None
    queries: SignalQueries = field(init=False)
    memory: PoolMemory = field(default_factory=PoolMemory)
    signal_memory: SignalMemory = field(default_factory=SignalMemory)
    scale_events: int = 0
    max_seen: int = 0

    def __post_init__(self) -> None:
        self.queries = twin_queries(self.spec.service)


class SloScaling(Component):
    def __init__(
        self,
        cluster: Cluster,
        deployments: DeploymentController,
        serving: ServingRuntime,
        specs: tuple[SloScalerSpec, ...],
    ) -> None:
        self.c = cluster
        self.deployments = deployments
        self.serving = serving
        self.scalers = [_Scaler(s) for s in specs]
        self.log = SeriesLog()
        self.promql = TwinPromql(cluster.tsdb)

    def start(self, until_s: float) -> None:
        self.until_s = until_s
        for s in self.scalers:
            self._arm(s)

    def _arm(self, s: _Scaler) -> None:
        period = s.spec.settings.sync_period_s
        if self.c.now + period <= self.until_s:
            self.c.loop.after(
                period, lambda: self._sync(s), priority=Priority.CONTROLLER, label="slo-scaler"
            )

    def _sync(self, s: _Scaler) -> None:
        self._arm(s)
        svc = self.serving.services[s.spec.service]
        spec = svc.spec
        key = f"{spec.namespace}/{spec.deployment}"
        if s.capacity is None:
            s.capacity = self.serving.capacity_model(spec.name)
            if s.capacity is None:
                return  # no engine built yet: nothing to size from
        pool = PoolSnapshot(
            name=spec.deployment,
            role=PoolRole.UNIFIED,
            replicas=self._replicas(spec.name),
            signals=self._signals(s, spec.name, s.spec.settings.sync_period_s),
            capacity=s.capacity,
            cold_start_s=self.serving.cold_start_estimate(spec.name),
            min_replicas=s.spec.min_replicas,
            max_replicas=s.spec.max_replicas,
            slo=SloTargets(spec.slo_ttft_s, spec.slo_itl_s),
            memory=s.memory,
        )
        decision = decide(SloSnapshot(self.c.now, (pool,)), s.spec.settings).pools[0]
        s.memory = decision.memory
        self._log_sync(spec.name, pool, decision.current_replicas, decision.desired_replicas)
        state = self.c.store.deployments.get(key)
        if state is not None and decision.desired_replicas != state.replicas:
            self.deployments.scale(key, decision.desired_replicas, f"SLO scaler: {decision.reason}")
            s.scale_events += 1
            s.max_seen = max(s.max_seen, decision.desired_replicas)
            self.c.count("autoscaler_scale_events")

    def _replicas(self, service: str) -> ReplicaStates:
        ready, loading = 0, []
        for pod, ready_s in self.serving.pods_of(service):
            if pod.conditions.get("Ready"):
                ready += 1
            else:
                start = pod.started_s if pod.started_s is not None else pod.created_s
                loading.append(LoadingReplica(start, ready_s))
        return ReplicaStates(ready, tuple(loading))

    def _signals(self, s: _Scaler, service: str, step_s: float) -> PoolSignals:
        now = self.c.now
        signals, s.signal_memory = read_signals(
            self.promql, s.queries, now, step_s, s.signal_memory
        )
        if s.spec.signals is SignalSource.ORACLE:
            return with_oracle(signals, self.serving, service, now)
        return signals

    def _log_sync(self, service: str, pool: PoolSnapshot, current: int, desired: int) -> None:
        now, entity = self.c.now, f"SLO scaler {service}"
        sig = pool.signals
        seen: list[tuple[str, float | None]] = [
            ("current_replicas", float(current)),
            ("desired_replicas", float(desired)),
            ("request_rate_rps", sig.arrival_rps[-1] if sig.arrival_rps else None),
            ("queue_length", sig.num_requests_waiting),
            ("trigger.ttft_p90_s.value", sig.ttft_p90_s),
            ("trigger.ttft_p90_s.threshold", pool.slo.ttft_p90_s if pool.slo else None),
            ("trigger.itl_p99_s.value", sig.itl_p99_s),
            ("trigger.itl_p99_s.threshold", pool.slo.itl_p99_s if pool.slo else None),
        ]
        for metric, value in seen:
            if value is not None:
                self.log.record(now, entity, metric, float(value))

    def series(self, grid: Sequence[float]) -> dict[str, list[SeriesRow]]:
        return {"autoscaling_timeseries.csv": self.log.on_grid(grid)}

    def summary(self) -> SloScalingSummary:
        return SloScalingSummary(
            tuple(
                SloScalerSummary(
                    service=s.spec.service,
                    scale_events=s.scale_events,
                    max_replicas=s.max_seen,
                    ttft_correction=round(s.memory.ttft_correction, 3),
                    itl_correction=round(s.memory.itl_correction, 3),
                    signals=s.spec.signals.value,
                )
                for s in self.scalers
            )
        )
