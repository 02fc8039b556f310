"""Benchmark: goodput per GPU, colocated against prefill/decode-disaggregated serving (issue 7).

Run: ``.venv/bin/python bench/pd_disaggregation.py`` (``--quick``: 5-minute slices, coarser
search; ``--json PATH`` also writes every probed point and the settings). Results and reading:
docs/serving_engine.md, "P/D disaggregation benchmark".

Llama-3.1-70B (bf16) on vLLM-V1-like engines at TP=4 on H200-141GB, behind llm-d's weighted-scorer
router; with prefill and decode engines, llm-d's P/D flow (decode engine first, prompt to a prefill
engine with ``max_tokens=1``, KV cache moved, every output token from the decode engine). Layouts
at equal GPU count: 8 GPUs = 2 colocated or 1P:1D; 12 GPUs = 3 colocated, 1P:2D or 2P:1D. Each
replays a slice of both Azure 2023 traces (default minutes 10-20) with inter-arrivals divided by a
factor, searched (doubling/halving, then geometric bisection) for the highest rate at which >= 90%
of requests meet TTFT <= 2 s and TPOT <= 100 ms (mean inter-token latency of the request, as
DistServe counts it; a one-token answer has none). That rate per GPU is the goodput per GPU.

Fabrics: ``nvlink`` (one HGX H200 node: TP on the NVSwitch, KV rank to rank over NV18), ``rdma``
(HGX nodes, prefill and decode on different nodes: KV over each rank's 400 Gb/s NIC), ``pcie``
(PCIe-only nodes: the same board without NVLink, TP all-reduces over PCIe Gen5, KV over the NIC).
Colocated engines move no KV, so ``nvlink`` and ``rdma`` share their runs. Deterministic: the
only randomness is the routers' seeded tie break; ``--jobs`` does not change the results.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import numpy.typing as npt

from gpuplane.core.errors import GpuplaneError, InputError
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine.settings import EngineConfig
from gpuplane.serving.memory.budget import plan_memory
from gpuplane.serving.models import resolve_model
from gpuplane.serving.models.shape import ModelShape
from gpuplane.serving.routing.outcome import (
    RequestOutcome,
    SimulationResult,
    Status,
    weighted_percentile,
)
from gpuplane.serving.routing.registry import make_router
from gpuplane.serving.routing.router import Role, Router
from gpuplane.serving.routing.simulation import ServingSimulation, SimulationSettings
from gpuplane.serving.steptime import Interconnect, KvLink, RooflineStepTime, kv_transfer_s
from gpuplane.serving.traffic.azure import load_azure_trace
from gpuplane.serving.traffic.trace import Trace
from gpuplane.topology.build import build_topology
from gpuplane.topology.catalog import GpuModel, get_gpu_model
from gpuplane.topology.hardware_spec import NvlinkSpec
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.presets import load_preset, preset_spec

ROOT = Path(__file__).resolve().parents[1]
TRACE_DIR = ROOT / "../shared/data/traces"
TRACES = {"code": "AzureLLMInferenceTrace_code.csv", "conv": "AzureLLMInferenceTrace_conv.csv"}
MODEL, GPU, TP, NODE = "meta-llama/Llama-3.1-70B", "H200-141GB", 4, "hgx-h200"


# -- what is compared ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Slo:
    ttft_s: float = 2.0
    tpot_s: float = 0.100
    target: float = 0.90  # share of requests that must meet both

    def met(self, o: RequestOutcome) -> bool:
        if o.status is not Status.COMPLETED or o.first_token_s is None or o.end_s is None:
            return False
        if o.first_token_s - o.arrival_s > self.ttft_s:
            return False
        return o.output_tokens <= 1 or tpot_s(o) <= self.tpot_s


def tpot_s(o: RequestOutcome) -> float:
    """Mean time per output token after the first (0 for a one-token answer)."""
    if o.end_s is None or o.first_token_s is None or o.output_tokens <= 1:
        return 0.0
    return (o.end_s - o.first_token_s) / (o.output_tokens - 1)


@dataclass(frozen=True, slots=True)
class Layout:
    name: str
    num_prefill: int = 0
    num_decode: int = 0
    num_colocated: int = 0

    @property
    def is_pd(self) -> bool:
        return self.num_prefill > 0

    @property
    def num_gpus(self) -> int:
        return TP * (self.num_prefill + self.num_decode + self.num_colocated)


LAYOUTS = (
    Layout("2 colocated", num_colocated=2),
    Layout("1P:1D", 1, 1),
    Layout("3 colocated", num_colocated=3),
    Layout("1P:2D", 1, 2),
    Layout("2P:1D", 2, 1),
)


@dataclass(frozen=True, slots=True)
class Fabric:
    """Where the engines run: the TP group's links and the prefill-to-decode KV path."""

    name: str
    tp_key: str  # fabrics with equal TP links give colocated engines identical runs
    tp_link: Interconnect
    kv_link: KvLink


def nic_kv_link(topo: NodeTopology, gpus: Sequence[int]) -> KvLink:
    """Each rank's nearest NIC (GPUDirect RDMA): the slower of the port and its PCIe path."""
    n = topo.num_gpus
    per_rank: list[tuple[float, float]] = []  # (GB/s of the path, port Gb/s)
    for g in gpus:
        k = min(range(len(topo.nics)), key=lambda i: (topo.links[g][n + i].rank, i))
        nic = topo.nics[k]
        if nic.speed_gbit is None:
            raise InputError(f"{topo.name}: NIC {nic.name} has no speed", expected="speed_gbit")
        per_rank.append((min(nic.speed_gbit / 8, topo.bandwidth_gbps[g][n + k]), nic.speed_gbit))
    gbps, port = min(per_rank)
    desc = f"{port:g} Gb/s NIC per rank ({gbps:g} GB/s), x{len(gpus)}"
    return KvLink(gbps, parallel_paths=len(gpus), description=desc)


def make_fabrics() -> dict[str, Fabric]:
    hgx = load_preset(NODE)
    prefill, decode = list(range(TP)), list(range(TP, 2 * TP))
    nv_tp = Interconnect.from_topology(hgx, prefill)
    # NVSwitch: rank i of the prefill engine reaches rank i of the decode engine on its own links.
    nv_gbps = min(hgx.bandwidth_gbps[p][d] for p, d in zip(prefill, decode, strict=True))
    nv_kv = KvLink(nv_gbps, parallel_paths=TP, description=f"NVLink {nv_gbps:g} GB/s x{TP}")
    spec = preset_spec(NODE).model_copy(
        update={"name": f"{NODE}-pcie-only", "nvlink": NvlinkSpec(fabric="none")}
    )
    pcie_node = build_topology(spec, source=f"{NODE} preset without its NVLink fabric")
    pcie_tp = Interconnect.from_topology(pcie_node, prefill)
    rdma = nic_kv_link(hgx, prefill)
    return {
        "nvlink": Fabric("nvlink", "nvswitch", nv_tp, nv_kv),
        "rdma": Fabric("rdma", "nvswitch", nv_tp, rdma),
        "pcie": Fabric("pcie", "pcie", pcie_tp, nic_kv_link(pcie_node, prefill)),
    }


@dataclass(frozen=True, slots=True)
class Deployment:
    shape: ModelShape
    gpu: GpuModel
    config: EngineConfig


def make_deployment() -> Deployment:
    """vLLM's memory plan for one TP rank gives the KV blocks and the default batch limits."""
    shape, gpu = resolve_model(MODEL), get_gpu_model(GPU)
    plan = plan_memory(shape, gpu, TP)
    config = EngineConfig(
        model_name=MODEL,
        num_gpu_blocks=plan.num_gpu_blocks,
        block_size=plan.block_size,
        max_model_len=plan.max_model_len,
        max_num_batched_tokens=plan.max_num_batched_tokens,
        max_num_seqs=plan.max_num_seqs,
    )
    return Deployment(shape, gpu, config)


def llm_d_router() -> Router:
    """llm-d's default scheduling profile (queue 2, KV utilization 2, prefix 3)."""
    return make_router("llm-d")


# -- one rate ------------------------------------------------------------------------------------
def simulate(trace: Trace, layout: Layout, fabric: Fabric, dep: Deployment) -> SimulationResult:
    model = RooflineStepTime(dep.shape, dep.gpu, TP, interconnect=fabric.tp_link)
    transfer: Callable[[int], float] | None = None
    if layout.is_pd:
        transfer = partial(kv_transfer_s, model=dep.shape, link=fabric.kv_link)
    sim = ServingSimulation(
        llm_d_router(),
        SimulationSettings(seed=0),
        prefill_router=llm_d_router(),
        kv_transfer_s=transfer,
    )
    roles: list[tuple[Role, int]] = [
        ("prefill", layout.num_prefill),
        ("decode", layout.num_decode),
        ("both", layout.num_colocated),
    ]
    for role, count in roles:
        for i in range(count):
            engine = Engine(dep.config, model, f"{role}-{i}", keep_itl=False)
            sim.add_engine(engine, role=role)
    sim.submit(trace.requests())
    return sim.run()


@dataclass(frozen=True, slots=True)
class Point:
    factor: float
    rate: float  # requests per second of the scaled slice
    attainment: float
    ttft_p90_s: float
    tpot_p90_s: float
    num_requests: int
    num_split: int  # requests that went through a prefill engine


def rate_of(trace: Trace, factor: float) -> float:
    return len(trace) * factor / trace.span_s


def measure(
    trace: Trace, factor: float, layout: Layout, fabric: Fabric, dep: Deployment, slo: Slo
) -> Point:
    """Replay ``trace`` at ``factor`` times its rate; fail loudly if a request went missing."""
    result = simulate(trace.time_scaled(factor), layout, fabric, dep)
    problems = result.conservation_problems()
    if problems or result.num_arrived != len(trace) or result.count(Status.IN_FLIGHT):
        raise RuntimeError(f"{layout.name}/{fabric.name} x{factor:g}: {problems or 'unfinished'}")
    done = result.completed()
    ttft = np.array([o.ttft_s for o in done if o.ttft_s is not None], dtype=np.float64)
    tpot = np.array([tpot_s(o) for o in done if o.output_tokens > 1], dtype=np.float64)
    return Point(
        factor,
        rate_of(trace, factor),
        sum(1 for o in result.outcomes if slo.met(o)) / len(trace),
        _p90(ttft),
        _p90(tpot),
        len(result.outcomes),
        sum(1 for o in done if o.prefill_engine_id is not None),
    )


def _p90(values: npt.NDArray[np.float64]) -> float:
    return weighted_percentile(values, np.ones(len(values), dtype=np.int64), 90.0)


# -- the rate search -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SearchSettings:
    start_per_gpu: float = 0.5  # the first probe, in requests/s per GPU
    bisections: int = 4  # each halves the bracket (in log space): 4 -> within 4.4%
    max_bracket: int = 8  # doublings/halvings to find a passing and a failing rate


@dataclass(frozen=True, slots=True)
class Search:
    trace: str
    layout: Layout
    fabric: str
    best: Point | None  # the highest probed rate that met the SLOs
    first_miss: Point | None  # the lowest probed rate above it that did not
    points: tuple[Point, ...]
    wall_s: float

    @property
    def goodput(self) -> float:
        return self.best.rate if self.best is not None else 0.0

    @property
    def per_gpu(self) -> float:
        return self.goodput / self.layout.num_gpus


@dataclass(frozen=True, slots=True)
class Job:
    trace_name: str
    trace: Trace
    layout: Layout
    fabric: Fabric
    dep: Deployment
    slo: Slo = field(default_factory=Slo)
    settings: SearchSettings = field(default_factory=SearchSettings)


def find_goodput(job: Job) -> Search:
    """Bracket the SLO boundary by doubling/halving the rate, then bisect it geometrically."""
    t0 = time.perf_counter()
    points: list[Point] = []

    def probe(factor: float) -> Point:
        p = measure(job.trace, factor, job.layout, job.fabric, job.dep, job.slo)
        points.append(p)
        return p

    def ok(p: Point) -> bool:
        return p.attainment >= job.slo.target

    first = probe(job.settings.start_per_gpu * job.layout.num_gpus / rate_of(job.trace, 1.0))
    good, bad = (first, None) if ok(first) else (None, first)
    for _ in range(job.settings.max_bracket):
        if good is not None and bad is not None:
            break
        p = probe(good.factor * 2 if good is not None else first.factor / 2 ** (len(points)))
        good, bad = (p, bad) if ok(p) else (good, p)
    if good is not None and bad is not None:
        for _ in range(job.settings.bisections):
            p = probe(math.sqrt(good.factor * bad.factor))
            good, bad = (p, bad) if ok(p) else (good, p)
    ordered = tuple(sorted(points, key=lambda q: q.factor))
    name = job.fabric.name
    return Search(job.trace_name, job.layout, name, good, bad, ordered, time.perf_counter() - t0)


def result_key(trace: str, layout: Layout, fabric: Fabric) -> tuple[str, str, str]:
    """Colocated engines move no KV: fabrics with the same TP links share their search."""
    return (trace, layout.name, fabric.tp_key if not layout.is_pd else fabric.name)


def run_all(jobs: list[Job], workers: int) -> dict[tuple[str, str, str], Search]:
    unique: dict[tuple[str, str, str], Job] = {}
    for job in jobs:
        unique.setdefault(result_key(job.trace_name, job.layout, job.fabric), job)
    # Longest searches first (more requests, more engines) so the workers finish together.
    keys = sorted(unique, key=lambda k: (-len(unique[k].trace), -unique[k].layout.num_gpus))
    todo = [unique[k] for k in keys]
    if workers <= 1:
        found = [find_goodput(j) for j in todo]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            found = list(pool.map(find_goodput, todo))
    return dict(zip(keys, found, strict=True))


# -- report --------------------------------------------------------------------------------------
def colocated_peer(layout: Layout) -> Layout:
    """The colocated layout with the same number of GPUs."""
    for other in LAYOUTS:
        if not other.is_pd and other.num_gpus == layout.num_gpus:
            return other
    raise ValueError(f"no colocated layout with {layout.num_gpus} GPUs")


def ratio(found: dict[tuple[str, str, str], Search], trace: str, lay: Layout, fab: Fabric) -> float:
    mine = found[result_key(trace, lay, fab)].per_gpu
    base = found[result_key(trace, colocated_peer(lay), fab)].per_gpu
    return mine / base if base > 0 else math.inf if mine > 0 else math.nan


def print_details(
    found: dict[tuple[str, str, str], Search], traces: list[str], fabrics: list[Fabric]
) -> None:
    head = (
        f"{'trace':5} {'fabric':6} {'layout':11} {'GPUs':>4} {'goodput':>8} {'/GPU':>6} "
        f"{'vs colo':>7} {'attain':>6} {'TTFT90':>7} {'TPOT90':>7} {'split':>5} {'miss at':>8} "
        f"{'runs':>4} {'wall':>5}"
    )
    print(f"\n{head}\n{'-' * len(head)}")
    for trace in traces:
        for fab in fabrics:
            for lay in LAYOUTS:
                s = found[result_key(trace, lay, fab)]
                b = s.best
                rel = f"{ratio(found, trace, lay, fab):6.2f}x" if lay.is_pd else f"{'':7}"
                miss = f"{s.first_miss.rate:8.2f}" if s.first_miss is not None else f"{'-':>8}"
                cells = (
                    f"{b.attainment:6.1%} {b.ttft_p90_s:6.2f}s {b.tpot_p90_s * 1e3:5.0f}ms "
                    f"{b.num_split / b.num_requests:5.0%}"
                    if b is not None
                    else f"{'below the lowest probed rate':>34}"
                )
                print(
                    f"{trace:5} {fab.name:6} {lay.name:11} {lay.num_gpus:4d} {s.goodput:8.2f} "
                    f"{s.per_gpu:6.3f} {rel} {cells} {miss} {len(s.points):4d} {s.wall_s:4.0f}s"
                )


def print_side_by_side(
    found: dict[tuple[str, str, str], Search], traces: list[str], fabrics: list[Fabric]
) -> None:
    cols = [(t, f) for t in traces for f in fabrics]
    print("\ngoodput per GPU (req/s/GPU); disaggregated / colocated at equal GPU count in brackets")
    print(f"{'':16}" + "".join(f"{t + ' ' + f.name:>17}" for t, f in cols))
    for lay in LAYOUTS:
        row = f"{lay.name:11} {lay.num_gpus:2d} G "
        for t, f in cols:
            v = found[result_key(t, lay, f)].per_gpu
            cell = f"{v:.3f} ({ratio(found, t, lay, f):.2f}x)" if lay.is_pd else f"{v:.3f}"
            row += f"{cell:>17}"
        print(row)


def describe(
    traces: dict[str, Trace], fabrics: list[Fabric], dep: Deployment, args: argparse.Namespace
) -> None:
    cfg = dep.config
    print(
        f"P/D disaggregation: {dep.shape.name} TP={TP} on {dep.gpu.name}; vLLM V1 engines with "
        f"{cfg.num_gpu_blocks:,} KV blocks of {cfg.page_tokens} tokens, max_num_batched_tokens "
        f"{cfg.max_num_batched_tokens}, max_num_seqs {cfg.max_num_seqs}; llm-d router (2/2/3)"
    )
    print(
        f"SLO: TTFT <= {args.ttft_slo_s:g} s and TPOT <= {args.tpot_slo_ms:g} ms for >= "
        f"{args.attainment:.0%} of requests; rate search: {args.bisections} bisections"
    )
    for name, tr in traces.items():
        end = args.window_start_min + args.window_min
        print(
            f"  {name}: minutes {args.window_start_min:g}-{end:g}, {len(tr):,} requests, "
            f"{rate_of(tr, 1.0):.2f} req/s at 1x, prompt mean {tr.prompt_tokens.mean():,.0f}, "
            f"output mean {tr.output_tokens.mean():,.0f} tokens"
        )
    for fab in fabrics:
        one = [
            kv_transfer_s(int(t.prompt_tokens.mean()), dep.shape, fab.kv_link)
            for t in traces.values()
        ]
        ms = ", ".join(f"{n} {v * 1e3:.1f} ms" for n, v in zip(traces, one, strict=True))
        print(f"  {fab.name:6} TP: {fab.tp_link.description}")
        print(f"  {'':6} KV: {fab.kv_link.description}; mean prompt's KV moves in {ms}")


def write_json(
    path: Path, found: dict[tuple[str, str, str], Search], args: argparse.Namespace, dep: Deployment
) -> None:
    doc = {
        "settings": {k: v for k, v in vars(args).items() if k != "json"},
        "model": dep.shape.name,
        "gpu": dep.gpu.name,
        "tp": TP,
        "engine_config": dep.config.model_dump(),
        "searches": [
            {
                "trace": s.trace,
                "layout": asdict(s.layout),
                "num_gpus": s.layout.num_gpus,
                "fabric": key[2],
                "goodput_rps": s.goodput,
                "goodput_rps_per_gpu": s.per_gpu,
                "points": [asdict(p) for p in s.points],
            }
            for key, s in found.items()
        ],
    }
    path.write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--quick", action="store_true", help="5-minute slices, 2 bisections")
    p.add_argument("--window-start-min", type=float, default=10.0)
    p.add_argument("--window-min", type=float, default=None, help="slice length (default 10)")
    p.add_argument("--bisections", type=int, default=None, help="default 4 (--quick: 2)")
    p.add_argument("--ttft-slo-s", type=float, default=2.0)
    p.add_argument("--tpot-slo-ms", type=float, default=100.0)
    p.add_argument("--attainment", type=float, default=0.90)
    p.add_argument("--traces", default="code,conv", help="comma list of code, conv")
    p.add_argument("--fabrics", default="nvlink,rdma,pcie", help="comma list")
    p.add_argument("--trace-dir", type=Path, default=TRACE_DIR)
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    p.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = p.parse_args(argv)
    checks = {
        "--window-min": args.window_min is None or args.window_min > 0,
        "--bisections": args.bisections is None or args.bisections >= 0,
        "--ttft-slo-s": args.ttft_slo_s > 0,
        "--tpot-slo-ms": args.tpot_slo_ms > 0,
        "--attainment": 0 < args.attainment <= 1,
        "--jobs": args.jobs >= 1,
    }
    for flag, ok in checks.items():
        if not ok:
            p.error(f"{flag} is out of range (see --help)")
    if args.window_min is None:
        args.window_min = 5.0 if args.quick else 10.0
    if args.bisections is None:
        args.bisections = 2 if args.quick else 4
    return args


def pick(names: str, valid: Sequence[str], what: str) -> list[str]:
    chosen = [n.strip() for n in names.split(",") if n.strip()]
    bad = [n for n in chosen if n not in valid]
    if bad or not chosen:
        raise InputError(
            f"{what} {', '.join(bad) or '(none)'}", expected=f"from {', '.join(valid)}"
        )
    return chosen


def load_slices(args: argparse.Namespace, names: list[str]) -> dict[str, Trace]:
    start = args.window_start_min * 60.0
    out = {}
    for name in names:
        piece = load_azure_trace(args.trace_dir / TRACES[name]).window(
            start, start + args.window_min * 60.0
        )
        if len(piece) < 2 or piece.span_s <= 0:
            raise InputError(
                f"the {name} slice from minute {args.window_start_min:g} has {len(piece)} requests",
                expected="a window inside the trace (about 57 minutes long)",
            )
        out[name] = piece
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    try:
        trace_names = pick(args.traces, list(TRACES), "trace")
        all_fabrics = make_fabrics()
        fabrics = [all_fabrics[n] for n in pick(args.fabrics, list(all_fabrics), "fabric")]
        traces = load_slices(args, trace_names)
        dep = make_deployment()
    except GpuplaneError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    slo = Slo(args.ttft_slo_s, args.tpot_slo_ms / 1e3, args.attainment)
    settings = SearchSettings(bisections=args.bisections)
    describe(traces, fabrics, dep, args)
    jobs = [
        Job(name, tr, lay, fab, dep, slo, settings)
        for name, tr in traces.items()
        for fab in fabrics
        for lay in LAYOUTS
    ]
    found = run_all(jobs, args.jobs)
    print_details(found, trace_names, fabrics)
    print_side_by_side(found, trace_names, fabrics)
    runs = sum(len(s.points) for s in found.values())
    print(f"\n{len(found)} searches, {runs} simulations, {time.perf_counter() - t0:.0f} s wall")
    if args.json is not None:
        try:
            write_json(args.json, found, args, dep)
        except OSError as err:
            print(f"error: cannot write {args.json}: {err.strerror or err}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
