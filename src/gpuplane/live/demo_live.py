"""``make demo-live``: two emulator engines (each with its DCGM exporter), the router, the KEDA
scaler and (when installed) a real Prometheus on loopback for ``--duration`` seconds, a seeded
stream of streaming requests through the router, then what was served, what Prometheus scraped
and what the scaler answers.

``python -m gpuplane.live.demo_live [--duration 60] [--rate 4] [--seed 0] [--time-scale 1]``
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import statistics
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from grpc import aio

from gpuplane.live.emulator.dcgm import DcgmSettings, make_dcgm_app
from gpuplane.live.emulator.service import make_app
from gpuplane.live.emulator.settings import EmulatorSettings, build, deployment
from gpuplane.live.http.aiohttp_serve import serving
from gpuplane.live.prometheus_live import (
    Json,
    PrometheusClient,
    prometheus_binary,
    start_prometheus,
    write_config,
)
from gpuplane.live.router.service import make_router_app
from gpuplane.live.scaler.engine import ScalerEngine
from gpuplane.live.scaler.grpc_service import StreamSettings
from gpuplane.live.scaler.keda_grpc.externalscaler_pb2 import (
    GetMetricsRequest,
    GetMetricsResponse,
    ScaledObjectRef,
)
from gpuplane.live.scaler.server import ServerOptions, start
from gpuplane.serving.inference_server import InferenceServerSpec

MODEL = "llama"
GPU_NAME = "NVIDIA H100 80GB HBM3"
NAMESPACE, DEPLOYMENT = "llm", "llama"
QUERIES = {
    "finished requests": "sum(vllm:request_success_total)",
    "prompt tokens": "sum(vllm:prompt_tokens_total)",
    "generated tokens": "sum(vllm:generation_tokens_total)",
    "arrival rate (1/s, 1m)": "sum(rate(vllm:request_success_total[1m]))",
    "TTFT p90 (emulated s)": "histogram_quantile(0.9, sum by (le) "
    "(rate(vllm:time_to_first_token_seconds_bucket[1m])))",
    "ITL p99 (emulated s)": "histogram_quantile(0.99, sum by (le) "
    "(rate(vllm:inter_token_latency_seconds_bucket[1m])))",
    "mean running (1m)": "sum(avg_over_time(vllm:num_requests_running[1m]))",
    "ready replicas (rule)": "kube_deployment_status_replicas_ready",
    "GPU util % (DCGM, mean)": "avg(avg_over_time(DCGM_FI_DEV_GPU_UTIL[1m]))",
    "GPU power W (DCGM, sum)": "sum(DCGM_FI_DEV_POWER_USAGE)",
    "FB used MiB (DCGM, max)": "max(DCGM_FI_DEV_FB_USED)",
}


@dataclass
class Served:
    ok: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    ttft_s: list[float] = field(default_factory=list)
    itl_s: list[float] = field(default_factory=list)


async def one_request(client: aiohttp.ClientSession, url: str, body: Json, out: Served) -> None:
    start_s = time.monotonic()
    stamps: list[float] = []
    usage: Json = {}
    try:
        async with client.post(url + "/v1/completions", json=body) as resp:
            if resp.status != 200:
                out.failed += 1
                return
            async for line in resp.content:
                text = line.decode().strip()
                if not text.startswith("data: ") or text == "data: [DONE]":
                    continue
                chunk = json.loads(text[len("data: ") :])
                if chunk.get("usage"):
                    usage = chunk["usage"]
                if chunk.get("choices"):
                    stamps.append(time.monotonic())
    except aiohttp.ClientError:
        out.failed += 1
        return
    out.ok += 1
    out.prompt_tokens += int(usage.get("prompt_tokens", 0))
    out.output_tokens += int(usage.get("completion_tokens", 0))
    if stamps:
        out.ttft_s.append(stamps[0] - start_s)
        out.itl_s.extend(b - a for a, b in itertools.pairwise(stamps))


async def load(url: str, duration_s: float, rate: float, seed: int) -> Served:
    """Poisson arrivals at ``rate`` per second for ``duration_s``, seeded prompts and lengths."""
    rng = random.Random(seed)
    words = ["gpu", "kv", "cache", "prefill", "decode", "batch", "router", "slo", "mig", "node"]
    shared = "You are a helpful assistant for GPU cluster operators. " * 8
    out = Served()
    tasks: list[asyncio.Task[None]] = []
    async with aiohttp.ClientSession() as client:
        loop = asyncio.get_running_loop()
        end = loop.time() + duration_s
        while loop.time() < end:
            prompt = shared + " ".join(rng.choice(words) for _ in range(rng.randint(10, 200)))
            body = {
                "model": MODEL,
                "prompt": prompt,
                "max_tokens": rng.randint(16, 256),
                "stream": True,
                "stream_options": {"include_usage": True},
                "user": f"user-{rng.randrange(8)}",
            }
            tasks.append(asyncio.create_task(one_request(client, url, body, out)))
            await asyncio.sleep(rng.expovariate(rate))
        await asyncio.gather(*tasks)
    return out


def pct(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000:.1f} ms"


def scaler_metadata(prometheus: str) -> dict[str, str]:
    return {
        "prometheusAddress": prometheus,
        "deployment": DEPLOYMENT,
        "podSelector": f'model_name="{MODEL}"',
        "coldStart": "60s",
        "minReplicas": "1",
        "maxReplicas": "8",
        "ttftP90": "2s",
        "itlP99": "200ms",
        "prefillTokensPerSecond": "20000",
        "decodeBaseStepSeconds": "0.02",
        "decodeStepPerKvTokenSeconds": "1e-7",
        "maxNumBatchedTokens": "8192",
        "kvCapacityTokens": "500000",
    }


async def get_metrics(port: int, prometheus: str) -> GetMetricsResponse:
    """``GetMetrics`` as KEDA's metrics server calls it for the HPA."""
    async with aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_unary(
            "/externalscaler.ExternalScaler/GetMetrics",
            request_serializer=GetMetricsRequest.SerializeToString,
            response_deserializer=GetMetricsResponse.FromString,
        )
        ref = ScaledObjectRef(
            name="llama-slo", namespace=NAMESPACE, scalerMetadata=scaler_metadata(prometheus)
        )
        response: GetMetricsResponse = await call(
            GetMetricsRequest(scaledObjectRef=ref, metricName="slo-replicas")
        )
        return response


RULES: list[Json] = [
    # kube-state-metrics' series the scaler reads, made from the engines' `up`.
    {
        "record": "kube_deployment_status_replicas_ready",
        "expr": 'count(up{job="engines"} == 1)',
        "labels": {"namespace": NAMESPACE, "deployment": DEPLOYMENT},
    },
    {
        "record": "kube_deployment_spec_replicas",
        "expr": 'count(up{job="engines"})',
        "labels": {"namespace": NAMESPACE, "deployment": DEPLOYMENT},
    },
]


async def run(duration_s: float, rate: float, seed: int, time_scale: float) -> None:
    spec = InferenceServerSpec(kind="vllm", model="Llama-3.1-8B", served_model_name=MODEL)
    binary = prometheus_binary()
    async with AsyncExitStack() as stack:
        engines, gpus = [], []
        for k in range(2):
            s = EmulatorSettings(spec, "H100-80GB", time_scale, seed + k, load_time_s=0.0)
            built, load_s = build(s)
            app = make_app(s, built.engine, load_s)
            engines.append(await stack.enter_async_context(serving(app)))
            # Each engine on its own emulated node, its DCGM exporter collecting every second.
            dcgm = DcgmSettings(f"node-{k}", collect_interval_ms=1000, seed=seed)
            dcgm_app = make_dcgm_app(app, deployment(s, built, load_s), dcgm, GPU_NAME)
            gpus.append(await stack.enter_async_context(serving(dcgm_app)))
        router = await stack.enter_async_context(
            serving(make_router_app(engines, "llm-d", scrape_interval_s=0.05, seed=seed))
        )
        scaler = await start(
            ServerOptions(listen="127.0.0.1:0", metrics_listen=None, stream=StreamSettings()),
            ScalerEngine(),
        )
        stack.push_async_callback(scaler.stop, 0.5)
        print(
            f"engines: {' '.join(engines)}\ndcgm:    {' '.join(gpus)}\nrouter:  {router}\n"
            f"scaler:  grpc 127.0.0.1:{scaler.port}"
        )
        prom: PrometheusClient | None = None
        if binary is None:
            print("prometheus: not installed (apt-get install -y prometheus); skipping its part")
        else:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="demo-live-")))
            jobs = {"engines": engines, "router": [router], "dcgm": gpus}
            config = write_config(folder, jobs, RULES)
            (folder / "tsdb").mkdir()
            running = start_prometheus(binary, config, folder / "tsdb")
            stack.callback(running.stop)
            session = await stack.enter_async_context(aiohttp.ClientSession())
            prom = PrometheusClient(session, running.url)
            await prom.wait_ready(running)
            print(f"prometheus: {running.url} (scrape and evaluation every 1 s)")
        print(f"sending ~{rate:g} req/s through the router for {duration_s:g} s (seed {seed}) ...")
        served = await load(router, duration_s, rate, seed)
        print(
            f"\nserved: {served.ok} requests ({served.failed} failed), "
            f"{served.prompt_tokens} prompt tokens, {served.output_tokens} output tokens"
        )
        print(
            f"client TTFT p50 {pct(served.ttft_s, 0.5)}, p90 {pct(served.ttft_s, 0.9)}, "
            f"p99 {pct(served.ttft_s, 0.99)}; ITL p50 {pct(served.itl_s, 0.5)}, "
            f"p99 {pct(served.itl_s, 0.99)} (wall clock, time scale {time_scale:g})"
        )
        if served.itl_s:
            print(f"client mean ITL {statistics.fmean(served.itl_s) * 1000:.1f} ms")
        if prom is None:
            return
        await asyncio.sleep(2.5)  # the last scrapes after the last request
        print("\nprometheus:")
        for label, expr in QUERIES.items():
            value = await prom.scalar(expr)
            print(f"  {label:<26} {'-' if value is None else f'{value:.6g}':>12}   {expr}")
        try:
            answer = await get_metrics(scaler.port, prom.url)
            for m in answer.metricValues:
                print(
                    f"\nscaler GetMetrics: {m.metricName} = {m.metricValueFloat:g} "
                    "(the HPA's target is 1 per replica: the desired replica count)"
                )
        except aio.AioRpcError as err:
            print(f"\nscaler GetMetrics: {err.code().name}: {err.details()}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="demo_live", description=__doc__)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    parser.add_argument("--rate", type=float, default=4.0, help="requests per second")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-scale", type=float, default=1.0, help="emulated s per wall s")
    args = parser.parse_args(argv)
    asyncio.run(run(args.duration, args.rate, args.seed, args.time_scale))


if __name__ == "__main__":
    main()
