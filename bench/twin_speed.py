"""Benchmark: one hour of the Azure conversation trace at 20x its rate through the serving twin.

Run: ``.venv/bin/python bench/twin_speed.py`` (options: ``--hours``, ``--rate``, ``--engines``,
``--router``, ``--baseline-s``). It replays the 2023 Azure LLM inference conversation trace
(``shared/data/traces``), compressed 20x and repeated to fill the hour (about 400,000 requests),
through a router over vLLM-V1-like engines serving Llama-3.1-8B on H100s, and prints wall time,
the process's CPU time (on a shared machine the difference is other load), simulated requests
per second, peak memory (max RSS) and the latency summary.

Step times come from ``gpuplane.serving.steptime.RooflineStepTime`` (the calibrated roofline) and
KV capacity and batch limits from ``gpuplane.serving.memory.plan_memory``. If those modules are
missing, a linear step model fitted to published DistServe/roofline figures is used instead and
the output says so.

``GPUPLANE_NATIVE=1`` runs it with the compiled modules (``gpuplane.core.native``; build them
with ``make native``); the header says which modules ran, and the results digest (every
outcome and inter-token latency) must be the same either way. ``make bench-twin-speed`` builds
them and runs both, plain then compiled.

Baseline, side by side in the same process: the engines' reference mode (every step and every
request one at a time) against fast mode on the first ``--baseline-s`` seconds of the same
traffic, with their results compared; the ratio of the two is the speed-up of fast-forwarding.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gpuplane.core import native
from gpuplane.serving.batch import BatchShape, StepTime, StepTimeModel
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine.settings import EngineConfig
from gpuplane.serving.engine.step_timer import LinearStepModel
from gpuplane.serving.routing.outcome import SimulationResult
from gpuplane.serving.routing.registry import ROUTER_NAMES, make_router
from gpuplane.serving.routing.simulation import ServingSimulation, SimulationSettings
from gpuplane.serving.traffic.azure import load_azure_trace
from gpuplane.serving.traffic.trace import Trace

ROOT = Path(__file__).resolve().parents[1]
CONV = ROOT / "../shared/data/traces/AzureLLMInferenceTrace_conv.csv"
MODEL, GPU = "meta-llama/Llama-3.1-8B", "H100-80GB"

# Fallback when the roofline model is absent: Llama-3.1-8B bf16 on an H100 from the reference's
# roofline facts (decode ~4.8 ms of weights at 3.35 TB/s and 60% efficiency, ~8 us per 1k context
# tokens of KV read, prefill at 50% MFU of 989 TFLOP/s: ~32 us per token) plus ~1.5 ms of
# scheduling overhead. Documented, not measured.
LINEAR_FALLBACK = LinearStepModel(
    overhead_s=0.0095, per_token_s=3.2e-5, per_context_s=8e-8, per_attention_s=5e-11
)


class TimedModel:
    """Counts the step model's calls and time (to separate it from the engine's own cost)."""

    def __init__(self, model: StepTimeModel) -> None:
        self.model = model
        self.calls = 0
        self.seconds = 0.0

    def step_time(self, batch: BatchShape) -> StepTime:
        t0 = time.perf_counter()
        out = self.model.step_time(batch)
        self.seconds += time.perf_counter() - t0
        self.calls += 1
        return out


class TimedRunModel(TimedModel):
    def decode_run_times(self, num_decodes: int, first_sum: int, steps: int) -> Any:
        t0 = time.perf_counter()
        out = self.model.decode_run_times(num_decodes, first_sum, steps)  # type: ignore[attr-defined]
        self.seconds += time.perf_counter() - t0
        self.calls += 1
        return out


@dataclass
class Deployment:
    label: str
    model: StepTimeModel
    config: EngineConfig


def deployment() -> Deployment:
    """The real step-time and memory models if present, else the documented fallback."""
    try:
        from gpuplane.serving.memory.budget import plan_memory
        from gpuplane.serving.models import resolve_model
        from gpuplane.serving.steptime import RooflineStepTime
        from gpuplane.topology.catalog import get_gpu_model
    except ImportError:
        cfg = EngineConfig(
            num_gpu_blocks=27487,
            max_model_len=131072,
            max_num_batched_tokens=8192,
            max_num_seqs=1024,
        )
        return Deployment(
            "linear fallback (gpuplane.serving.steptime not found)", LINEAR_FALLBACK, cfg
        )
    shape, gpu = resolve_model(MODEL), get_gpu_model(GPU)
    plan = plan_memory(shape, gpu, 1)
    cfg = EngineConfig(
        model_name=MODEL,
        num_gpu_blocks=plan.num_gpu_blocks,
        block_size=plan.block_size,
        max_model_len=plan.max_model_len,
        max_num_batched_tokens=plan.max_num_batched_tokens,
        max_num_seqs=plan.max_num_seqs,
    )
    label = f"RooflineStepTime({shape.name}, {gpu.name}, TP1); {plan.num_gpu_blocks} KV blocks"
    return Deployment(label, RooflineStepTime(shape, gpu, 1), cfg)


@dataclass
class RunStats:
    wall_s: float
    cpu_s: float
    result: SimulationResult
    steps: int
    model_calls: int
    model_s: float


def simulate(trace: Trace, dep: Deployment, engines: int, router: str, fast: bool) -> RunStats:
    timed = (
        TimedRunModel(dep.model)
        if hasattr(dep.model, "decode_run_times")
        else TimedModel(dep.model)
    )
    sim = ServingSimulation(make_router(router), SimulationSettings(seed=0))
    for i in range(engines):
        sim.add_engine(Engine(dep.config, timed, f"engine-{i}", fast=fast, keep_itl=True))
    sim.submit(trace.requests())
    t0, c0 = time.perf_counter(), time.process_time()
    result = sim.run()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    steps = sum(e.num_steps for e in sim.engines())
    return RunStats(wall, cpu, result, steps, timed.calls, timed.seconds)


def report(name: str, trace: Trace, run: RunStats) -> None:
    res, sim_s, wall = run.result, trace.span_s, run.wall_s
    share = run.model_s / wall if wall else 0.0
    lat = res.latency_summary((50.0, 99.0))
    print(f"\n{name}")
    print(f"  requests          {len(trace):>10,}   simulated {sim_s:,.0f} s")
    print(f"  wall              {wall:>10.1f} s   {len(trace) / wall:,.0f} requests/s, ", end="")
    print(f"{sim_s / wall:.1f}x real time")
    print(f"  cpu               {run.cpu_s:>10.1f} s   (this process; the rest of wall: waiting)")
    print(f"  engine steps      {run.steps:>10,}   {run.steps / wall:,.0f} steps/s")
    print(f"  step-model calls  {run.model_calls:>10,}   {run.model_s:.1f} s ({share:.0%} of wall)")
    print(f"  outcomes          {res.counts()}")
    print(f"  conservation      {res.conservation_problems() or 'ok'}")
    print("  latency (s)       " + "  ".join(f"{k[:-2]}={v:.3f}" for k, v in lat.items()))


def same_results(a: SimulationResult, b: SimulationResult) -> float:
    """Largest difference of end times between two runs of the same traffic (inf if they differ)."""
    ea = {o.request_id: (o.end_s, o.output_tokens) for o in a.outcomes}
    eb = {o.request_id: (o.end_s, o.output_tokens) for o in b.outcomes}
    if ea.keys() != eb.keys():
        return math.inf
    worst = 0.0
    for k, (end, out) in ea.items():
        end_b, out_b = eb[k]
        if out != out_b or (end is None) != (end_b is None):
            return math.inf
        if end is not None and end_b is not None:
            worst = max(worst, abs(end - end_b))
    return worst


def results_digest(res: SimulationResult) -> str:
    """SHA-256 (first 16 hex digits) of every outcome and every inter-token latency sample."""
    h = hashlib.sha256()
    for o in res.outcomes:
        h.update(repr(o).encode())
    for array in (res.itl_values, res.itl_weights):  # read in place: millions of samples
        h.update(memoryview(np.ascontiguousarray(array)))
    return h.hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--rate", type=float, default=20.0, help="rate multiplier")
    parser.add_argument("--engines", type=int, default=16)
    parser.add_argument("--router", default="llm-d", choices=ROUTER_NAMES)
    parser.add_argument("--baseline-s", type=float, default=30.0, help="slice for the baseline")
    args = parser.parse_args(argv)

    dep = deployment()
    base = load_azure_trace(CONV)
    trace = base.rate_scaled(args.rate, args.hours * 3600.0)
    print(f"twin speed: {base.source} x{args.rate:g} for {args.hours:g} h, ", end="")
    print(f"{args.engines} engines, router {args.router}")
    print(f"step model: {dep.label}")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    print(f"modules: {native.describe()}")

    piece = trace.window(0.0, args.baseline_s)
    ref = simulate(piece, dep, args.engines, args.router, fast=False)
    fast_piece = simulate(piece, dep, args.engines, args.router, fast=True)
    report(f"baseline: reference mode (step by step), first {args.baseline_s:g} s", piece, ref)
    report(f"fast mode, same {args.baseline_s:g} s", piece, fast_piece)
    print(f"\n  speed-up of fast mode over step by step: {ref.wall_s / fast_piece.wall_s:.1f}x")
    # RooflineStepTime prices a decode run equal to step-by-step only up to float rounding, and
    # a 1-ulp shift can reorder two events; a model with exact run pricing shows equality.
    exact = Deployment("linear", LINEAR_FALLBACK, dep.config)
    a = simulate(piece, exact, args.engines, args.router, fast=False)
    b = simulate(piece, exact, args.engines, args.router, fast=True)
    print(f"  with LinearStepModel (exact run pricing): reference {a.wall_s:.1f} s, ", end="")
    worst = same_results(a.result, b.result)
    print(f"fast {b.wall_s:.1f} s, largest end-time difference {worst:.1e} s")

    full = simulate(trace, dep, args.engines, args.router, fast=True)
    report(f"fast mode, {args.hours:g} h at {args.rate:g}x", trace, full)
    print(f"  results digest    {results_digest(full.result)}")
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak memory (max RSS of the process): {rss_mib:,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
