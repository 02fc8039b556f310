"""The scaler behind the gRPC service: metadata -> readings -> ``autoscaler.slo.decide`` ->
the metric KEDA's HPA turns into the decided count.

A decision is reused while younger than half a sync period, so the ``GetMetrics`` + ``IsActive``
pair of one KEDA poll, and several clients polling at once, see one decision and the scaler's
memory advances once per period, as in the twin. A ScaledObject whose metadata changes starts
with a fresh memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import aiohttp

from gpuplane.autoscaler.keda.replica_metric import metric_for
from gpuplane.autoscaler.slo.scaler import decide
from gpuplane.live.scaler.metadata import ScalerConfig, parse_metadata
from gpuplane.live.scaler.prom_api import PromApi, PromSettings
from gpuplane.live.scaler.readings import read
from gpuplane.live.scaler.snapshot import pool_snapshot, track_loading
from gpuplane.live.scaler.state import Evaluation, ObjectState

Key = tuple[str, str]


class ScalerEngine:
    """Owns the per-ScaledObject state and the HTTP session to Prometheus."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.objects: dict[Key, ObjectState] = {}
        self._metadata: dict[Key, tuple[tuple[str, str], ...]] = {}
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    def config(self, namespace: str, name: str, meta: Mapping[str, str]) -> ScalerConfig:
        """The validated config (MetadataError on bad metadata); a change resets the state."""
        key, items = (namespace, name), tuple(sorted(meta.items()))
        state = self.objects.get(key)
        if state is not None and self._metadata.get(key) == items:
            return state.config
        config = parse_metadata(meta, namespace)
        self.objects[key] = ObjectState(config)
        self._metadata[key] = items
        return config

    async def evaluate(self, namespace: str, name: str, meta: Mapping[str, str]) -> Evaluation:
        config = self.config(namespace, name, meta)
        state = self.objects[(namespace, name)]
        async with state.lock:
            now = self.clock()
            reuse_s = config.settings.sync_period_s / 2
            if state.last is not None and 0 <= now - state.last.decided_at_s < reuse_s:
                return state.last
            state.last = await self._decide(state, now)
            return state.last

    def _api(self, config: ScalerConfig) -> PromApi:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        settings = PromSettings(
            config.prometheus_address,
            config.timeout_s,
            config.retries,
            config.ignore_null_values,
        )
        return PromApi(self._session, settings)

    async def _decide(self, state: ObjectState, now: float) -> Evaluation:
        config = state.config
        readings = await read(config, self._api(config), now, state.signals)
        state.signals = readings.memory
        loading = max(0, readings.current - readings.ready)
        state.loading_starts = track_loading(state.loading_starts, loading, now)
        ready = min(readings.ready, readings.current)
        snap = pool_snapshot(
            config, ready, readings.signals, state.loading_starts, state.memory, now
        )
        pool = decide(snap, config.settings).pools[0]
        state.memory = pool.memory
        current = pool.current_replicas
        return Evaluation(
            decided_at_s=now,
            desired=pool.desired_replicas,
            current=current,
            ready=min(readings.ready, readings.current),
            metric_value=metric_for(pool.desired_replicas, current),
            reason=pool.reason,
            decision=pool,
        )
