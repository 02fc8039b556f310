"""Benchmark: ``gpuplane serve scaler``'s GetMetrics latency as KEDA sees it.

Run: ``.venv/bin/python bench/scaler_latency.py`` (``--calls 300``). The scaler (grpc.aio,
loopback, insecure) and a fake Prometheus (aiohttp, answering every query from a dict) run in
one process and one event loop, as a client KEDA's would call them over one kept-alive channel:

- cached: repeated GetMetrics within half a sync period reuse one decision (what the second
  call of a KEDA poll, IsActive, and any concurrent poller see);
- fresh: the scaler's clock advances one sync period before every call, so each call runs a
  decision: 14 concurrent instant queries (13 signals and one new step of the arrival history)
  and ``autoscaler.slo.decide``;
- first: the first decision of a ScaledObject, which also backfills 40 history steps.

p50/p99 over ``--calls`` calls after one warm-up call. The fake Prometheus answers in well under
a millisecond; a real one adds its query time to the fresh figure (the queries run concurrently,
so about the slowest one).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from grpc import aio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuplane.live.scaler.engine import ScalerEngine
from gpuplane.live.scaler.server import ServerOptions, start
from tests.integration.fake_prometheus import FakePrometheus
from tests.integration.test_keda_scaler import Clock, Keda, load, metadata, ref


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000.0


async def _run(calls: int) -> dict[str, tuple[float, float]]:
    prom = FakePrometheus()
    await prom.start()
    clock = Clock()
    options = ServerOptions(listen="127.0.0.1:0", metrics_listen=None)
    scaler = await start(options, ScalerEngine(clock))
    out: dict[str, tuple[float, float]] = {}
    try:
        async with aio.insecure_channel(f"127.0.0.1:{scaler.port}") as channel:
            keda, r = Keda(channel), ref(metadata(prom.address))
            load(prom, rps=12.0, ready=4, spec=4, waiting=10.0)
            t0 = time.perf_counter()
            await keda.metrics(r, "slo-replicas")
            first = time.perf_counter() - t0
            out["first"] = (first * 1000.0, first * 1000.0)
            for name, step_s in (("cached", 0.0), ("fresh", 15.0)):
                samples = []
                for _ in range(calls + 1):
                    clock.t_s += step_s
                    t0 = time.perf_counter()
                    await keda.metrics(r, "slo-replicas")
                    samples.append(time.perf_counter() - t0)
                out[name] = (_pct(samples[1:], 0.5), _pct(samples[1:], 0.99))
    finally:
        await scaler.stop(0)
        await prom.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    results = asyncio.run(_run(args.calls))
    print("| GetMetrics | p50 ms | p99 ms |")
    print("|---|---|---|")
    for name, (p50, p99) in results.items():
        print(f"| {name} | {p50:.2f} | {p99:.2f} |")


if __name__ == "__main__":
    main()
