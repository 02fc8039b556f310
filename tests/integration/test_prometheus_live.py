"""A real Prometheus (Debian's ``prometheus``) scraping two emulator engines, their DCGM
exporters and the router.

What Prometheus stored must be what the engines served, and gpuplane's PromQL evaluated over
the samples Prometheus exports must answer as Prometheus does. Both evaluate at the same time
over the same raw samples (exported with a range-vector instant query), so even the
extrapolated ``rate`` sees the same points and exact agreement is expected; the comparison is
to a relative 1e-9, which allows for a different float summation order and for Prometheus's
integer-millisecond times against gpuplane's float seconds (the exported times are shifted
near zero so that float seconds keep sub-microsecond precision). Needs ``prometheus``
(``.ci/run`` installs it as root); skipped without it.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from gpuplane.autoscaler.promql import Scalar, evaluate
from gpuplane.autoscaler.promql.series_file import load_series_text
from gpuplane.live.emulator.dcgm import DcgmSettings
from gpuplane.live.emulator.dcgm_model import MIB, fb_used_bytes
from gpuplane.live.emulator.settings import build, deployment
from gpuplane.live.prometheus_live import (
    PrometheusClient,
    RunningPrometheus,
    prometheus_binary,
    start_prometheus,
    write_config,
)
from tests.integration.llm_servers import (
    MODEL,
    Json,
    chunks,
    emulator_with_dcgm,
    router,
    settings,
    stream,
)

BINARY = prometheus_binary()
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        BINARY is None,
        reason="no prometheus binary (apt-get install -y prometheus; .ci/run installs it as root)",
    ),
]
REQUESTS = 24
REL_TOL = 1e-9
QUERIES = [
    "sum(vllm:request_success_total)",
    "sum by (instance) (vllm:prompt_tokens_total)",
    "sum by (instance) (rate(vllm:generation_tokens_total[1m]))",
    "rate(vllm:request_success_total[1m])",
    "histogram_quantile(0.9, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[1m])))",
    "histogram_quantile(0.5, sum by (le, instance) "
    "(rate(vllm:inter_token_latency_seconds_bucket[1m])))",
    "avg_over_time(vllm:num_requests_running[1m])",
    "max_over_time(vllm:kv_cache_usage_perc[1m])",
    "sum(rate(gpuplane_router_routed_requests_total[1m]))",
    "avg by (Hostname) (avg_over_time(DCGM_FI_DEV_GPU_UTIL[1m]))",
    "sum by (Hostname) (rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION[1m]))",
    "max by (Hostname, gpu) (DCGM_FI_DEV_FB_USED)",
]


@asynccontextmanager
async def prometheus(tmp: Path, jobs: dict[str, list[str]]) -> AsyncIterator[PrometheusClient]:
    assert BINARY is not None
    data = tmp / "tsdb"
    data.mkdir()
    running: RunningPrometheus = start_prometheus(BINARY, write_config(tmp, jobs), data)
    try:
        async with aiohttp.ClientSession() as session:
            client = PrometheusClient(session, running.url)
            await client.wait_ready(running)
            yield client
    finally:
        running.stop()


async def until(what: str, check: Callable[[], Awaitable[bool]], timeout_s: float = 30.0) -> None:
    """Poll ``check`` until it returns True."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not await check():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.2)


def requests(seed: int) -> list[Json]:
    rng = random.Random(seed)
    words = ["gpu", "kv", "cache", "prefill", "decode", "batch", "router", "slo"]
    return [
        {
            "model": MODEL,
            "prompt": " ".join(rng.choice(words) for _ in range(rng.randint(5, 80))),
            "max_tokens": rng.randint(2, 24),
            "stream_options": {"include_usage": True},
        }
        for _ in range(REQUESTS)
    ]


def exported_store_text(matrix: list[Json], base: int) -> str:
    """Prometheus's matrix result as gpuplane's JSON series file, times ``base`` seconds back.

    gpuplane holds times as float seconds; at Unix times (~1.8e9 s, a float64 ulp of 2.4e-7 s)
    a 1 m window's length would be off by ~4e-9 relative to Prometheus's integer milliseconds.
    Shifted near 0 and rounded back to the millisecond they are exact to ~1e-13 s."""
    series = []
    for s in matrix:
        labels = {k: v for k, v in s["metric"].items() if k != "__name__"}
        samples = [[round(float(t) - base, 3), v] for t, v in s["values"]]
        series.append({"name": s["metric"]["__name__"], "labels": labels, "samples": samples})
    return json.dumps({"series": series})


def as_map(data: Json) -> dict[tuple[tuple[str, str], ...], float]:
    if data["resultType"] == "scalar":
        return {(): float(data["result"][1])}
    return {tuple(sorted(s["metric"].items())): float(s["value"][1]) for s in data["result"]}


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)


def test_prometheus_stores_what_the_emulator_served_and_agrees_with_gpuplane_promql(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        fast = settings(time_scale=200.0)
        built, load_s = build(fast)
        fb_mib = fb_used_bytes(deployment(fast, built, load_s), load_s) // MIB
        node_a = DcgmSettings("node-a", collect_interval_ms=100)
        node_b = DcgmSettings("node-b", collect_interval_ms=100)
        async with (
            emulator_with_dcgm(fast, node_a) as (a, gpu_a),
            emulator_with_dcgm(fast, node_b) as (b, gpu_b),
            router([a, b], "round-robin") as r,
            prometheus(
                tmp_path, {"engines": [a, b], "router": [r], "dcgm": [gpu_a, gpu_b]}
            ) as prom,
            aiohttp.ClientSession() as client,
        ):

            async def all_up() -> bool:
                health = await prom.targets_up()
                return len(health) == 5 and set(health.values()) == {"up"}

            await until("five targets up", all_up)
            answers = await asyncio.gather(
                *(stream(client, r + "/v1/completions", body) for body in requests(7))
            )
            usage = [chunks(payloads)[-1]["usage"] for payloads in answers]
            prompt_tokens = sum(u["prompt_tokens"] for u in usage)
            output_tokens = sum(u["completion_tokens"] for u in usage)

            async def scraped() -> bool:
                # Each target is scraped on its own schedule: wait for the router's too.
                done = await prom.scalar("sum(vllm:request_success_total)")
                tokens = await prom.scalar("sum(vllm:generation_tokens_total)")
                routed = await prom.scalar("sum(gpuplane_router_routed_requests_total)")
                return done == REQUESTS and tokens == output_tokens and routed == REQUESTS

            await until("the finished requests scraped", scraped)
            assert await prom.scalar("sum(vllm:prompt_tokens_total)") == prompt_tokens
            routed = await prom.scalar("sum(gpuplane_router_routed_requests_total)")
            assert routed == REQUESTS
            # The DCGM endpoints: one GPU per engine, the memory plan's framebuffer, energy.
            assert await prom.scalar("count(DCGM_FI_DEV_GPU_UTIL)") == 2
            assert await prom.scalar("max(DCGM_FI_DEV_FB_USED)") == fb_mib
            hosts = as_map(await prom.query("count by (Hostname) (DCGM_FI_DEV_POWER_USAGE)"))
            assert {dict(k)["Hostname"] for k in hosts} == {"node-a", "node-b"}
            per_engine = as_map(await prom.query("sum by (instance) (vllm:request_success_total)"))
            assert sorted(per_engine.values()) == [REQUESTS / 2, REQUESTS / 2]  # round robin
            await asyncio.sleep(3.0)  # a few more scrapes, so rates span several points

            # A sample carries its scrape's start time but is stored when the scrape ends (within
            # the 1 s scrape timeout): evaluate 2 s back, where every scrape has been stored, so
            # that the export and the queries see the same samples.
            at = round(time.time() - 2.0, 3)
            matrix = await prom.query('{__name__=~"vllm:.+|gpuplane_router_.+|DCGM_.+"}[5m]', at)
            assert matrix["resultType"] == "matrix"
            times = {round(float(t), 3) for s in matrix["result"] for t, _ in s["values"]}
            while round(at - 60.0, 3) in times:  # keep a sample off the window's left edge,
                at = round(at - 0.001, 3)  # where the two could differ on open vs closed
            base = int(at) - 600
            store = load_series_text(exported_store_text(matrix["result"], base), "export")
            for q in QUERIES:
                theirs = as_map(await prom.query(q, at))
                value = evaluate(q, store, round(at - base, 3))
                ours: dict[tuple[tuple[str, str], ...], float] = (
                    {(): value.value}
                    if isinstance(value, Scalar)
                    else {tuple(sorted(s.labels_dict().items())): s.value for s in value.samples}
                )
                assert theirs, q
                assert ours.keys() == theirs.keys(), q
                for key, v in theirs.items():
                    assert same(ours[key], v), (q, key, ours[key], v)

    asyncio.run(scenario())
