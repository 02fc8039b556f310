"""The twin's and the KEDA external scaler's SLO-scaler signals are one thing: on one recorded
series set (``tests/fixtures/slo_signals``, a twin run of the SLO example), the twin's provider
(gpuplane's PromQL over the series) and the live scaler's path (its trigger metadata, the HTTP
API of a Prometheus on loopback answering over the same series, KEDA's reading rules) run the
same queries at the same times and give equal ``PoolSignals``, oracle off."""

from __future__ import annotations

import asyncio
import gzip
from pathlib import Path

import aiohttp

from gpuplane.autoscaler.promql.series_file import load_series_text
from gpuplane.autoscaler.slo.signals import SignalMemory, plan, read_signals
from gpuplane.core.tsdb import SeriesStore
from gpuplane.live.scaler.metadata import ScalerConfig, parse_metadata
from gpuplane.live.scaler.prom_api import PromApi, PromSettings
from gpuplane.live.scaler.readings import Readings, read
from gpuplane.twin.autoscaling.promql_source import TwinPromql
from gpuplane.twin.autoscaling.slo import twin_queries
from tests.fixtures.slo_signals.record import AT_S, OUT, SERVICE, STEP_S
from tests.integration.promql_prometheus import PromqlPrometheus

SEL = f'service="{SERVICE}"'


def recorded() -> SeriesStore:
    text = gzip.decompress(Path(OUT).read_bytes()).decode()
    return load_series_text(text, str(OUT))


def live_config(prometheus: str) -> ScalerConfig:
    """The trigger metadata ``deploy render serving`` writes, with the twin's labels."""
    meta = {
        "prometheusAddress": prometheus,
        "deployment": "llm/vllm-qwen",
        "podSelector": SEL,
        "arrivalRateQuery": f"sum(rate(vllm:num_incoming_requests_total{{{SEL}}}[1m]))",
        "coldStart": "180s",
        "maxReplicas": "16",
        "prefillTokensPerSecond": "20000",
        "decodeBaseStepSeconds": "0.02",
        "decodeStepPerKvTokenSeconds": "1e-7",
    }
    return parse_metadata(meta, "llm")


async def live_readings(store: SeriesStore) -> tuple[Readings, PromqlPrometheus]:
    prom = PromqlPrometheus(store)
    await prom.start()
    try:
        config = live_config(prom.address)
        prom.fixed = {config.replica_queries.ready: 3.0, config.replica_queries.spec: 4.0}
        async with aiohttp.ClientSession() as session:
            api = PromApi(session, PromSettings(prom.address))
            return await read(config, api, AT_S, SignalMemory()), prom
    finally:
        await prom.stop()


def test_the_twin_and_the_live_scaler_read_equal_signals() -> None:
    store = recorded()
    queries = twin_queries(SERVICE)
    twin, twin_memory = read_signals(TwinPromql(store), queries, AT_S, STEP_S, SignalMemory())
    live, prom = asyncio.run(live_readings(store))
    config = live_config(prom.address)
    assert config.queries == queries  # one query set: the metadata's defaults are the twin's
    asked = {(q.text, q.at_s) for q in plan(queries, AT_S, STEP_S, SignalMemory())}
    replicas = {(config.replica_queries.ready, AT_S), (config.replica_queries.spec, AT_S)}
    assert set(prom.queries) == asked | replicas
    assert live.signals == twin
    assert live.memory == twin_memory
    assert (live.ready, live.current) == (3, 4)
    # The recording is not idle: every signal the queries give has a value.
    assert twin.ttft_p90_s is not None and twin.itl_p99_s is not None
    assert twin.queue_time_p90_s is not None and len(twin.prompt_quantiles) == 6
    assert twin.num_requests_running > 0 and twin.kv_cache_usage > 0
    assert sum(twin.arrival_rps) > 0 and twin.mean_prompt_tokens > 0


def test_later_decisions_read_only_the_new_history_steps() -> None:
    store = recorded()
    queries = twin_queries(SERVICE)
    first, memory = read_signals(TwinPromql(store), queries, AT_S - STEP_S, STEP_S, SignalMemory())
    again = plan(queries, AT_S, STEP_S, memory)
    history = [q for q in again if q.text == queries.arrival_rate]
    assert [q.at_s for q in history] == [AT_S]
    second, _ = read_signals(TwinPromql(store), queries, AT_S, STEP_S, memory)
    assert second.arrival_rps[:-1] == first.arrival_rps[1:]
