"""Benchmark: the engine emulator (``gpuplane serve engine``) under concurrent streaming load.

Run: ``PYTHONPATH=src .venv/bin/python bench/emulator.py`` (``--quick``: shorter phases;
``--json PATH`` writes the figures). Results: docs/benchmarks.md, "Engine emulator".

One emulator process (a subprocess, as it is deployed) and one client process (this one, aiohttp):

1. **Throughput**: ``--concurrency`` closed-loop streaming clients with short prompts at a large
   ``--time-scale``: requests/s and token events (SSE chunks) per second sustained, wall time.
2. **Timing fidelity**: Poisson arrivals at ``--rate`` (emulated req/s; ``--requests`` of them,
   on a fresh emulator at ``--fidelity-scale``, default 1; times are reported in emulated
   seconds); each client measures TTFT (request sent to first token chunk) and ITL (gaps
   between token chunks). The twin runs the *same* requests (the same prompt token counts and
   prefix segments, the same engine from ``serving.engine_build.engine_for_gpu``) through
   ``ClockDriver`` with a clock that jumps, twice: arriving at the client's send times, and
   arriving at the times the engine queued them (the emulator's ``X-Gpuplane-Arrival-S``), which
   replays the emulator's own schedule. Reported: p50, p90, p99 against both, and per request
   the client's extra TTFT split into the request's path (send -> queued) and each token's
   delivery lateness (received - its step's end in the replay, placed on the wall clock with
   ``X-Gpuplane-Clock-Origin``). ``--fidelity-only`` skips phases 1 and 3.
3. **Overhead**: ``--sequential`` requests one at a time on the idle engine (time scale 1): the
   client's TTFT minus the twin's for the same request is what HTTP, JSON, the event loop and
   the OS add (the engine's own time is the twin's); reported in milliseconds.
4. **Baseline**: llm-d-inference-sim's constant-latency model (``time-to-first-token``,
   ``inter-token-latency`` fixed; ``shared/reference/llm-serving.md`` section 3.1) with its two
   constants set to the twin's unloaded single-request TTFT and ITL, computed on the same trace:
   every percentile is the constant, so its error against the twin is what load does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import aiohttp
import numpy as np

from gpuplane.core.clock import FixedClock
from gpuplane.live.emulator.service import ARRIVAL_HEADER, ORIGIN_HEADER
from gpuplane.live.openai.text import segments_of, text_tokens
from gpuplane.serving.engine.live import RequestRecord
from gpuplane.serving.engine.wall_clock import ClockDriver
from gpuplane.serving.engine_build import engine_for_gpu
from gpuplane.serving.inference_server import InferenceServerSpec
from gpuplane.serving.request import Request, RequestId
from gpuplane.topology.catalog import get_gpu_model

SRC = Path(__file__).resolve().parents[1] / "src"
MODEL, GPU, TP = "Llama-3.1-8B", "H100-80GB", 1


def start_emulator(time_scale: float) -> tuple[subprocess.Popen[bytes], str]:
    args = [sys.executable, "-m", "gpuplane", "serve", "engine", "--model", MODEL, "--gpu", GPU]
    args += ["--tp", str(TP)]
    args += ["--port", "0", "--time-scale", str(time_scale), "--load-time", "0", "--dcgm-port", "0"]
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    line = json.loads(proc.stderr.readline())
    return proc, f"http://127.0.0.1:{line['port']}"


def prompt_text(k: int, tokens: int, phase: str) -> str:
    """Prompt ``k`` of a phase: its first token is unique to (phase, k), so no two prompts of
    the run share a cached block (the fidelity phase runs on the engine the overhead phase
    used; a shared first block would be a prefix-cache hit there that the twin, which replays
    the fidelity requests alone, does not have)."""
    return f"{phase}{k:06d} " + "lorem ipsum dolor sit amet " * (tokens * 4 // 27 + 1)


async def one(
    client: aiohttp.ClientSession, url: str, prompt: str, max_tokens: int
) -> tuple[float, float, list[float], float, float]:
    """(send time, TTFT, token times) of one streaming request, wall seconds on
    ``time.monotonic``, the emulated time the engine queued it at (``X-Gpuplane-Arrival-S``)
    and the engine clock's origin on ``time.monotonic`` (``X-Gpuplane-Clock-Origin``)."""
    body = {"model": MODEL, "prompt": prompt, "max_tokens": max_tokens, "ignore_eos": True}
    sent = time.monotonic()
    times: list[float] = []
    async with client.post(url + "/v1/completions", json={**body, "stream": True}) as resp:
        seen, origin = float(resp.headers[ARRIVAL_HEADER]), float(resp.headers[ORIGIN_HEADER])
        async for line in resp.content:
            if line.startswith(b"data: {"):
                times.append(time.monotonic())
    return sent, times[0] - sent, times, seen, origin


async def throughput(url: str, concurrency: int, seconds: float) -> dict[str, float]:
    end = time.monotonic() + seconds
    done = events = 0

    async def worker(w: int, client: aiohttp.ClientSession) -> None:
        nonlocal done, events
        k = 0
        while time.monotonic() < end:
            _, _, times, _, _ = await one(client, url, prompt_text(w * 100000 + k, 64, "t"), 32)
            done, events, k = done + 1, events + len(times), k + 1

    conn = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=conn) as client:
        start = time.monotonic()
        await asyncio.gather(*(worker(w, client) for w in range(concurrency)))
        wall = time.monotonic() - start
    return {"requests_per_s": done / wall, "token_events_per_s": events / wall, "wall_s": wall}


def ms_pct(values: list[float] | np.ndarray) -> dict[str, float]:
    """Percentiles 0 (the minimum), 1, 50, 99 and 100 in milliseconds."""
    arr = np.asarray(values) * 1e3
    return {f"p{q}": round(float(np.percentile(arr, q)), 3) for q in (0, 1, 50, 99, 100)}


def pct(values: list[float]) -> dict[str, float]:
    arr = np.asarray(values)
    return {f"p{q}": float(np.percentile(arr, q)) for q in (50, 90, 99)}


async def fidelity(
    url: str, rate: float, n: int, prompt: int, output: int, seed: int, scale: float
) -> dict[str, Any]:
    """Poisson arrivals at ``rate`` emulated req/s against an emulator running ``scale`` times
    faster than the wall; every time below is in emulated seconds (wall seconds x ``scale``)."""
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1.0 / rate, n)
    prompts = [
        prompt_text(k, int(rng.integers(prompt // 2, prompt * 3 // 2)), "f") for k in range(n)
    ]
    outs = [int(rng.integers(output // 2, output * 3 // 2)) for _ in range(n)]
    due = np.cumsum(gaps) / scale
    conn = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=conn) as client:
        await one(client, url, prompt_text(n, 16, "w"), 2)  # a warm connection and engine
        await asyncio.sleep(0.1)
        start = time.monotonic()
        tasks = []
        for k in range(n):
            await asyncio.sleep(max(0.0, start + float(due[k]) - time.monotonic()))
            tasks.append(asyncio.create_task(one(client, url, prompts[k], outs[k])))
        results = await asyncio.gather(*tasks)
    t0 = min(r[0] for r in results)
    client_ttft = [r[1] * scale for r in results]
    client_itl = [(b - a) * scale for r in results for a, b in pairwise(r[2])]
    sent = [(r[0] - t0) * scale for r in results]
    seen = [r[3] for r in results]
    by_send = twin(prompts, outs, sent)
    by_seen = twin(prompts, outs, seen)
    out: dict[str, Any] = {"client": {"ttft": pct(client_ttft), "itl": pct(client_itl)}}
    out["twin_client_send"] = {"ttft": pct(by_send[0]), "itl": pct(by_send[1])}
    out["twin_server_arrival"] = {"ttft": pct(by_seen[0]), "itl": pct(by_seen[1])}
    out["baseline_constants"] = {"ttft": by_send[2][0], "itl": by_send[2][1]}
    # Per request: the client's TTFT minus the twin's on the engine's own arrivals (what the
    # network, HTTP and the event loop add, including the send -> handler delay), split into
    # the request's path (send -> the engine queues it) and each token's delivery lateness
    # (received - the end of its step in the twin's replay, on the engine's clock).
    extra = np.asarray(client_ttft) - np.asarray(by_seen[3])
    out["ttft_extra_ms"] = ms_pct(extra)
    origin = results[0][4]
    path = [(origin + r[3] / scale - r[0]) * scale for r in results]
    late = [
        (got - (origin + t / scale)) * scale
        for r, twin_times in zip(results, by_seen[4], strict=True)
        for got, t in zip(r[2], twin_times, strict=True)
    ]
    first_late = [
        (r[2][0] - (origin + twin_times[0] / scale)) * scale
        for r, twin_times in zip(results, by_seen[4], strict=True)
    ]
    # Drift check: the median lateness in each quarter of the trace (by send order).
    per_req = [
        [(got - (origin + t / scale)) * scale for got, t in zip(r[2], tt, strict=True)]
        for r, tt in zip(results, by_seen[4], strict=True)
    ]
    quarters = np.array_split(np.arange(len(per_req)), 4)
    out["token_lateness_p50_by_quarter_ms"] = [
        round(float(np.median([x for k in q for x in per_req[k]])) * 1e3, 3) for q in quarters
    ]
    out["request_path_ms"] = ms_pct(path)
    out["token_lateness_ms"] = ms_pct(late)
    out["first_token_lateness_ms"] = ms_pct(first_late)
    out["achieved_rate"] = n / ((max(r[2][-1] for r in results) - t0) * scale)
    out["requests"], out["time_scale"] = n, scale
    return out


def twin(
    prompts: list[str], outs: list[int], arrivals: list[float]
) -> tuple[list[float], list[float], tuple[float, float], list[float], list[tuple[float, ...]]]:
    """The twin's TTFTs and ITLs for these requests arriving at ``arrivals``, its unloaded
    single-request (TTFT, ITL), and the TTFT and token times of each request in the order
    given."""
    spec = InferenceServerSpec("vllm", MODEL, MODEL, tensor_parallel_size=TP)

    def simulate(reqs: list[Request]) -> list[RequestRecord]:
        built = engine_for_gpu(spec, get_gpu_model(GPU), record_token_times=True)
        clock = FixedClock()

        def jump(t: float) -> None:
            clock.t_s = max(clock.t_s, t)

        return ClockDriver(built.engine, clock, jump).run(reqs)

    order = sorted(range(len(arrivals)), key=lambda k: arrivals[k])
    block = engine_for_gpu(spec, get_gpu_model(GPU)).engine.block_size
    reqs = []
    for k in order:
        tokens = text_tokens(prompts[k])
        reqs.append(
            Request(
                RequestId(f"r{k}"),
                arrivals[k],
                len(tokens),
                outs[k],
                segments_of(tokens, block),
                max_tokens=outs[k],
            )
        )
    records = simulate(reqs)
    by_id = {r.request_id: r for r in records}
    each = [by_id[f"r{k}"].ttft_s for k in range(len(arrivals))]
    token_times = [by_id[f"r{k}"].token_times or () for k in range(len(arrivals))]
    ttft = [t for t in each if t is not None]
    itl = [b - a for r in records for a, b in pairwise(r.token_times or ())]
    one_req = simulate([reqs[0]])[0]
    times = one_req.token_times
    assert times is not None and one_req.ttft_s is not None
    single_itl = (times[-1] - times[0]) / (len(times) - 1)
    return ttft, itl, (one_req.ttft_s, single_itl), [t or 0.0 for t in each], token_times


async def overhead(url: str, n: int) -> dict[str, float]:
    """Client TTFT minus the twin's, ms, for ``n`` requests sent one at a time (idle engine)."""
    prompts = [prompt_text(k, 512, "o") for k in range(n)]
    conn = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=conn) as client:
        await one(client, url, prompt_text(n, 16, "o"), 2)  # a warm connection, as in the trace
        ttft = []
        for p in prompts:
            ttft.append((await one(client, url, p, 16))[1])
            await asyncio.sleep(0.02)
    # Far apart in the twin: every request finds the engine idle, as it did here.
    twin_ttft = twin(prompts, [16] * n, [10.0 * k for k in range(n)])[0]
    extra = np.asarray(ttft) - np.asarray(twin_ttft)
    return {f"p{q}_ms": float(np.percentile(extra, q) * 1e3) for q in (10, 50, 90)} | {
        "mean_ms": float(extra.mean() * 1e3),
        "twin_ttft_ms": float(np.mean(twin_ttft) * 1e3),
    }


def rel(a: float, b: float) -> float:
    return (a - b) / b


async def main() -> None:
    global MODEL, GPU, TP
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--rate", type=float, default=4.0)
    ap.add_argument("--requests", type=int, help="fidelity trace length (default 200; 60 quick)")
    ap.add_argument(
        "--fidelity-scale", type=float, default=1.0, help="the fidelity emulator's --time-scale"
    )
    ap.add_argument("--fidelity-only", action="store_true", help="skip throughput and overhead")
    ap.add_argument("--sequential", type=int, default=40)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--model", default=MODEL)
    ap.add_argument("--gpu", default=GPU)
    ap.add_argument("--tp", type=int, default=TP)
    args = ap.parse_args()
    MODEL, GPU, TP = args.model, args.gpu, args.tp
    seconds, n = (5.0, 60) if args.quick else (15.0, 200)
    n = args.requests or n
    report: dict[str, object] = {"load_before": os.getloadavg()}
    if not args.fidelity_only:
        proc, url = start_emulator(100.0)
        try:
            report["throughput"] = await throughput(url, args.concurrency, seconds)
        finally:
            proc.terminate()
            proc.wait()
        proc, url = start_emulator(1.0)
        try:
            report["overhead"] = await overhead(url, args.sequential)
        finally:
            proc.terminate()
            proc.wait()
        print(json.dumps(report["throughput"], indent=1))
        print("overhead (client TTFT - twin TTFT, idle engine):", json.dumps(report["overhead"]))
    proc, url = start_emulator(args.fidelity_scale)
    try:
        fid = await fidelity(url, args.rate, n, 512, 128, 0, args.fidelity_scale)
        report["fidelity"] = fid
    finally:
        proc.terminate()
        proc.wait()
    report["load_after"] = os.getloadavg()
    print(
        f"{n} requests at time scale {args.fidelity_scale}: achieved rate "
        f"{fid['achieved_rate']:.2f} req/s; load average {report['load_before']} -> "
        f"{report['load_after']}"
    )
    base = fid["baseline_constants"]
    for metric in ("ttft", "itl"):
        for q in ("p50", "p90", "p99"):
            c = fid["client"][metric][q]
            t_send = fid["twin_client_send"][metric][q]
            t_seen = fid["twin_server_arrival"][metric][q]
            b = base[metric]
            print(
                f"{metric} {q}: client {c * 1e3:8.2f} ms | twin on client sends "
                f"{t_send * 1e3:8.2f} ms ({rel(c, t_send):+6.1%}) | twin on engine arrivals "
                f"{t_seen * 1e3:8.2f} ms ({rel(c, t_seen):+6.1%}) | constant-latency "
                f"{b * 1e3:8.2f} ms ({rel(b, t_send):+6.1%})"
            )
    keys = ("ttft_extra_ms", "request_path_ms", "first_token_lateness_ms", "token_lateness_ms")
    for key in (*keys, "token_lateness_p50_by_quarter_ms"):
        print(f"{key}: {fid[key]}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
