"""Serving runs whose every result is hashed: run once plain and once with ``GPUPLANE_NATIVE``
(``test_native.py``), the digests must be equal.

Run: ``python -m tests.integration.native_runs`` (from the repository root); prints one JSON
object: which modules ran (``core.native.describe``) and a digest per run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from gpuplane.core import native
from gpuplane.serving.batch import StepTimeModel
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine.settings import EngineConfig
from gpuplane.serving.engine.step_timer import LinearStepModel
from gpuplane.serving.memory.budget import plan_memory
from gpuplane.serving.models import resolve_model
from gpuplane.serving.routing.registry import make_router
from gpuplane.serving.routing.simulation import ServingSimulation, SimulationSettings
from gpuplane.serving.steptime import RooflineStepTime
from gpuplane.serving.traffic.azure import load_azure_trace
from gpuplane.serving.traffic.trace import Trace
from gpuplane.topology.catalog import get_gpu_model

CONV = Path(__file__).resolve().parents[3] / "shared/data/traces/AzureLLMInferenceTrace_conv.csv"
LINEAR = LinearStepModel(
    overhead_s=0.0095, per_token_s=3.2e-5, per_context_s=8e-8, per_attention_s=5e-11
)


def digest(sim: ServingSimulation) -> str:
    """SHA-256 of every outcome, the exact ITL samples, each engine's counters and histograms,
    its steps, busy time and free blocks, and the scraped series."""
    res = sim.result()
    h = hashlib.sha256()
    for o in res.outcomes:
        h.update(repr(o).encode())
    h.update(res.itl_values.tobytes() + res.itl_weights.tobytes() + repr(res.end_s).encode())
    for e in sim.engines():
        stats = e.stats
        for name in sorted(n for n in dir(stats) if not n.startswith("_")):
            v = getattr(stats, name)
            if hasattr(v, "counts"):
                h.update(f"{name}{v.counts}{v.sum!r}{v.count}".encode())
            elif isinstance(v, int | float):
                h.update(f"{name}{v!r}".encode())
        state = (e.num_steps, e.busy_prefill_s, e.busy_decode_s, e.kv.num_free, e.now_s)
        h.update(repr(state).encode())
    store = res.store
    if store is not None:
        for name in store.names():
            for series in sorted(store.series(name), key=lambda s: repr(s.labels)):
                h.update(repr((name, series.labels, series.times, series.values)).encode())
    return h.hexdigest()


def _roofline() -> tuple[StepTimeModel, EngineConfig]:
    shape, gpu = resolve_model("meta-llama/Llama-3.1-8B"), get_gpu_model("H100-80GB")
    plan = plan_memory(shape, gpu, 1)
    cfg = EngineConfig(
        num_gpu_blocks=plan.num_gpu_blocks,
        block_size=plan.block_size,
        max_model_len=plan.max_model_len,
        max_num_batched_tokens=plan.max_num_batched_tokens,
        max_num_seqs=plan.max_num_seqs,
    )
    return RooflineStepTime(shape, gpu, 1), cfg


def _run(
    trace: Trace,
    router: str,
    engines: int,
    model: StepTimeModel,
    cfg: EngineConfig,
    settings: SimulationSettings,
    fast: bool = True,
    add: Callable[[ServingSimulation, Engine, int], None] | None = None,
) -> str:
    sim = ServingSimulation(make_router(router), settings)
    for i in range(engines):
        eng = Engine(cfg, model, f"engine-{i}", fast=fast, keep_itl=True)
        if add is None:
            sim.add_engine(eng)
        else:
            add(sim, eng, i)
    sim.submit(trace.requests())
    sim.run()
    return digest(sim)


def runs() -> dict[str, str]:
    roof, cfg = _roofline()
    conv = load_azure_trace(CONV)
    busy, short = conv.rate_scaled(20.0, 60.0), conv.rate_scaled(20.0, 10.0)
    small = cfg.model_copy(update={"num_gpu_blocks": 400, "max_num_seqs": 32})
    sglang = small.model_copy(update={"kind": "sglang"})
    scrape = SimulationSettings(seed=3, scrape_interval_s=5.0)

    def pd_roles(sim: ServingSimulation, eng: Engine, i: int) -> None:
        sim.add_engine(eng, role="prefill" if i % 2 else "decode")

    return {
        # The twin_speed deployment: llm-d over 16 vLLM engines, the roofline step time.
        "llm-d-roofline": _run(busy, "llm-d", 16, roof, cfg, SimulationSettings(seed=0)),
        # Small KV pools (preemption, prefix-cache eviction), metrics scraped every 5 s.
        "kv-cost-preempting": _run(short, "kv-cost", 4, LINEAR, small, scrape),
        "sglang": _run(short, "least-outstanding", 4, LINEAR, sglang, scrape),
        "reference-mode": _run(short, "round-robin", 4, roof, small, scrape, fast=False),
        "pd-split": _run(short, "llm-d", 4, LINEAR, cfg, SimulationSettings(), add=pd_roles),
    }


def main() -> None:
    digests = runs()
    print(json.dumps({"modules": native.describe(), "digests": digests}, indent=2))


if __name__ == "__main__":
    main()
