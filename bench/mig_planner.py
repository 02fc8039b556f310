"""Benchmark: the MIG planner against the static ``all-balanced`` config and a greedy placer.

Run: ``.venv/bin/python bench/mig_planner.py`` (``--quick`` for a fast subset, ``--per-seed`` for
every seed's row). Everything runs side by side in this process on the same seeded demand.

Demand: replicas of small models served by vLLM, one MIG instance each. A model's instance is
derived from its size (:data:`MODELS`): bf16 weights + a KV cache budget + 1 GiB for activations,
CUDA graphs and the CUDA context must fit in 90 % of the instance's memory (vLLM's default
``gpu_memory_utilization``), and the instance needs the compute slices the replica's throughput
target asks for; the smallest such profile is taken (fewest memory slices, then fewest compute
slices). Instance memory is the ``nvidia-smi mig -lgip`` figure of the fact sheet (H100-80GB);
H200-141GB has none there, so 16.0 GiB per memory slice is used (real ``-lgip`` output shows
16.00 GiB for ``1g.18gb``). Every seed draws a mix of the models (Dirichlet around
:data:`MODELS`' shares) and adds replicas until they fill ``--load`` (default 75 %) of the fleet
by the slice bound (max of compute slices / 7 and memory slices / 8, summed).

Part 1, a fleet of empty MIG-enabled GPUs (8, 64, 256, 1000 GPUs of one model):
(a) ``all-balanced``: NVIDIA's mig-parted config (2 x 1g + 2g + 3g) on every GPU. A replica may
    use any instance at least as large as its own (at least as many compute slices and memory
    slices: its pod is rewritten to request that resource). GPUs needed = the fewest balanced
    GPUs that can host every replica: by Hall's theorem for this transportation problem, the
    maximum over sets S of requested profiles of ceil(demand(S) / balanced slots able to host
    some profile of S); "n/a" if a profile fits no balanced instance.
(b) ``greedy``: first-fit decreasing per replica (most memory slices, then most compute slices
    first): each instance is created on the first GPU where the driver accepts it, at the start
    the driver picks (``auto_place.auto_create``); a new GPU is opened when none does.
(c) ``planner``: ``planner.decide`` on the fleet; GPUs used, its lower bound, whether every stage
    was proven optimal, and its wall time (the per-model layout enumeration is cached per process
    and measured once, separately, as "cold").

Part 2, re-planning a busy fleet: the fleet runs ``all-balanced`` with replicas already placed
(``--busy-load``, default 50 %; each on the smallest free balanced instance that hosts it, first
fit over GPUs); a new wave (``--wave-load``, default 35 %) arrives. Static: new replicas that find
no free balanced instance. Planner without eviction (running pods stay where they are) and with
it: replicas left pending, GPUs used (running pods included), GPUs reconfigured, pods evicted,
wall time.

Part 3 (``--stress``, about a minute): the worst case for grouping identical GPUs, every GPU on
its own random maximal layout with half its instances in use.
"""

from __future__ import annotations

import argparse
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from gpuplane.serving.memory.vllm_defaults import DEFAULT_GPU_MEMORY_UTILIZATION
from gpuplane.slicing.mig import (
    GpuState,
    Instance,
    MigGpu,
    MigPlan,
    MigPlanSettings,
    MigProfile,
    decide,
    get_mig_gpu,
    make_snapshot,
)
from gpuplane.slicing.mig.auto_place import apply_counts, auto_create
from gpuplane.slicing.mig.enumerate import maximal_layouts
from gpuplane.slicing.mig.parted_defaults import balanced_counts
from gpuplane.slicing.mig.profiles import NUM_COMPUTE_SLICES, NUM_MEMORY_SLICES

GIB = 2**30
BF16_BYTES = 2  # vLLM's dtype "auto" serves fp32 checkpoints (bge) in fp16 as well
VLLM_GPU_MEMORY_UTILIZATION = DEFAULT_GPU_MEMORY_UTILIZATION  # vLLM's default: 0.9
RUNTIME_OVERHEAD_GIB = 1.0  # activations of one prefill chunk, CUDA graphs, CUDA context
H200_GIB_PER_MEMORY_SLICE = 16.0  # nvidia-smi mig -lgip on H200: 1g.18gb = 16.00 GiB
MIX_CONCENTRATION = 10.0
GPU_MODELS = ("H100-80GB", "H200-141GB")


@dataclass(frozen=True, slots=True)
class ServedModel:
    """One model a replica serves. Parameters and KV layout are the models' published configs
    (KV bytes per token = 2 (K and V) x layers x KV heads x head size x 2 bytes)."""

    name: str
    params_b: float
    kv_bytes_per_token: int
    kv_tokens: int  # KV cache the replica keeps (concurrent sequences x context)
    compute_slices: int  # SM slices its throughput target needs
    share: float  # share of replicas in the base mix

    @property
    def need_gib(self) -> float:
        weights = self.params_b * 1e9 * BF16_BYTES
        return (weights + self.kv_tokens * self.kv_bytes_per_token) / GIB + RUNTIME_OVERHEAD_GIB


MODELS = (
    # embedding model: 0.34 B, no KV cache
    ServedModel("BAAI/bge-large-en-v1.5", 0.335, 0, 0, 1, 0.25),
    # small chat model: 32 layers, 32 KV heads of 80 (no GQA)
    ServedModel("microsoft/phi-2", 2.78, 327_680, 4_096, 1, 0.10),
    # 8B at low traffic: 32 layers, 8 KV heads of 128
    ServedModel("meta-llama/Llama-3.1-8B-Instruct", 8.03, 131_072, 8_192, 1, 0.15),
    # 7B chat: 28 layers, 4 KV heads of 128
    ServedModel("Qwen/Qwen2.5-7B-Instruct", 7.62, 57_344, 32_768, 2, 0.20),
    # 8B long-context RAG: 32k tokens of KV
    ServedModel("meta-llama/Llama-3.1-8B-Instruct 32k", 8.03, 131_072, 32_768, 2, 0.12),
    # 14B chat: 48 layers, 8 KV heads of 128
    ServedModel("Qwen/Qwen2.5-14B-Instruct", 14.77, 196_608, 32_768, 3, 0.18),
)


def usable_gib(gpu: MigGpu, profile: MigProfile) -> float:
    if profile.memory_gib is not None:
        return profile.memory_gib
    if gpu.name != "H200-141GB":
        raise ValueError(f"no instance memory figure for {gpu.name} {profile.name}")
    return H200_GIB_PER_MEMORY_SLICE * profile.memory_slices


def profile_for(gpu: MigGpu, model: ServedModel) -> MigProfile:
    """The smallest profile that holds the model and has the compute it needs."""
    fits = [
        p
        for p in gpu.profiles
        if not p.media_extensions
        and p.compute_slices >= model.compute_slices
        and usable_gib(gpu, p) * VLLM_GPU_MEMORY_UTILIZATION >= model.need_gib
    ]
    if not fits:
        raise ValueError(f"{model.name} fits no MIG instance of {gpu.name}")
    return min(fits, key=lambda p: (p.memory_slices, p.compute_slices))


def draw_demand(gpu: MigGpu, num_gpus: int, load: float, seed: int) -> dict[str, int]:
    """Replicas (profile -> count) of a seeded mix, filling ``load`` of the fleet's slices."""
    rng = np.random.default_rng(seed)
    mix = rng.dirichlet(MIX_CONCENTRATION * np.array([m.share for m in MODELS]))
    profiles = [profile_for(gpu, m) for m in MODELS]
    draws = rng.choice(len(MODELS), size=math.ceil(NUM_COMPUTE_SLICES * num_gpus * load) + 1, p=mix)
    compute = np.cumsum([profiles[k].compute_slices for k in draws]) / NUM_COMPUTE_SLICES
    memory = np.cumsum([profiles[k].memory_slices for k in draws]) / NUM_MEMORY_SLICES
    count = int(np.argmax(np.maximum(compute, memory) >= load * num_gpus)) + 1
    return dict(Counter(profiles[k].name for k in draws[:count]))


def _size(p: MigProfile) -> tuple[int, int]:
    return (p.memory_slices, p.compute_slices)


def hosts(big: MigProfile, small: MigProfile) -> bool:
    """An instance of ``big`` can serve a replica sized for ``small``."""
    return big.compute_slices >= small.compute_slices and big.memory_slices >= small.memory_slices


def all_balanced_gpus(gpu: MigGpu, demand: dict[str, int]) -> int | None:
    """Fewest all-balanced GPUs hosting ``demand`` (Hall's condition), None if impossible."""
    slots = {gpu.profile(n): k for n, k in balanced_counts(gpu).items()}
    wanted = [(gpu.profile(n), k) for n, k in demand.items() if k]
    need = 0
    for size in range(1, len(wanted) + 1):
        for group in combinations(wanted, size):
            able = {s for s in slots for p, _ in group if hosts(s, p)}
            per_gpu = sum(slots[s] for s in able)
            if not per_gpu:
                return None
            need = max(need, math.ceil(sum(k for _, k in group) / per_gpu))
    return need


def greedy_ffd(gpu: MigGpu, demand: dict[str, int]) -> list[list[Instance]]:
    """First-fit decreasing with driver auto-placement; the instances on every opened GPU."""
    order = sorted(
        demand, key=lambda n: (-gpu.profile(n).memory_slices, -gpu.profile(n).compute_slices, n)
    )
    gpus: list[list[Instance]] = []
    first = dict.fromkeys(demand, 0)  # GPUs before this one cannot take the profile any more
    for name in order:
        for _ in range(demand[name]):
            i, inst = first[name], None
            while i < len(gpus):
                inst = auto_create(gpu, gpus[i], name)
                if inst is not None:
                    break
                i += 1
            if inst is None:  # no open GPU takes it: open one
                inst = auto_create(gpu, [], name)
                if inst is None:
                    raise ValueError(f"{name} does not fit an empty {gpu.name}")
                gpus.append([])
            first[name] = i
            gpus[i].append(inst)
    return gpus


def timed_decide(
    gpus: Sequence[GpuState], demand: dict[str, int], settings: MigPlanSettings
) -> tuple[MigPlan, float]:
    snapshot = make_snapshot(gpus, demand)
    t0 = time.perf_counter()
    plan = decide(snapshot, settings)
    return plan, time.perf_counter() - t0


@dataclass(frozen=True, slots=True)
class FreshRow:
    replicas: int
    balanced: int | None
    greedy: int
    planner: int
    bound: int
    optimal: bool
    unplaced: int
    plan_s: float
    greedy_s: float


def fresh_run(gpu: MigGpu, num_gpus: int, load: float, seed: int) -> FreshRow:
    demand = draw_demand(gpu, num_gpus, load, seed)
    t0 = time.perf_counter()
    greedy = len(greedy_ffd(gpu, demand))
    greedy_s = time.perf_counter() - t0
    plan, plan_s = timed_decide(
        [GpuState(i, gpu) for i in range(num_gpus)], demand, MigPlanSettings()
    )
    return FreshRow(
        replicas=sum(demand.values()),
        balanced=all_balanced_gpus(gpu, demand),
        greedy=greedy,
        planner=plan.gpus_used,
        bound=plan.lower_bound,
        optimal=plan.optimal,
        unplaced=sum(plan.unplaced.values()),
        plan_s=plan_s,
        greedy_s=greedy_s,
    )


def _saving(planner: int, other: int | None) -> float:
    return math.nan if not other else 100.0 * (1.0 - planner / other)


def print_fresh(gpu: MigGpu, num_gpus: int, rows: list[FreshRow], per_seed: bool) -> None:
    if per_seed:
        for seed, r in enumerate(rows):
            bal = "n/a" if r.balanced is None else str(r.balanced)
            print(
                f"    seed {seed}: replicas {r.replicas} balanced {bal} greedy {r.greedy} "
                f"planner {r.planner} bound {r.bound} optimal {r.optimal} "
                f"unplaced {r.unplaced} {1e3 * r.plan_s:.1f} ms"
            )
    balanced = None if any(r.balanced is None for r in rows) else sum(r.balanced or 0 for r in rows)
    greedy, planner = sum(r.greedy for r in rows), sum(r.planner for r in rows)
    vs_bal = [_saving(r.planner, r.balanced) for r in rows]
    times = [1e3 * r.plan_s for r in rows]
    bal_text = "n/a" if balanced is None else str(balanced)
    print(
        f"{gpu.name:>11} {num_gpus:>5} {sum(r.replicas for r in rows):>8} {bal_text:>9} "
        f"{greedy:>7} {planner:>8} {sum(r.bound for r in rows):>6} "
        f"{sum(r.optimal for r in rows):>3}/{len(rows):<3} {sum(r.unplaced for r in rows):>5} "
        f"{_saving(planner, balanced):>7.1f} {min(vs_bal):>7.1f} {_saving(planner, greedy):>7.1f} "
        f"{np.mean(times):>8.1f} {max(times):>8.1f} "
        f"{1e3 * np.mean([r.greedy_s for r in rows]):>8.1f}"
    )


def part_fresh(sizes: Sequence[int], seeds: int, load: float, per_seed: bool) -> None:
    print(f"Part 1: empty fleets, demand filling {100 * load:.0f} % of the fleet's slices")
    print("GPU counts are sums over seeds; saving = 1 - planner / other.")
    print(
        f"{'gpu':>11} {'fleet':>5} {'replicas':>8} {'balanced':>9} {'greedy':>7} {'planner':>8} "
        f"{'bound':>6} {'optimal':>7} {'unpl':>5} {'vs bal%':>7} {'min%':>7} {'vs grd%':>7} "
        f"{'plan ms':>8} {'max ms':>8} {'grd ms':>8}"
    )
    for model in GPU_MODELS:
        gpu = get_mig_gpu(model)
        for num_gpus in sizes:
            rows = [fresh_run(gpu, num_gpus, load, 1000 * num_gpus + s) for s in range(seeds)]
            print_fresh(gpu, num_gpus, rows, per_seed)


def busy_fleet(gpu: MigGpu, num_gpus: int, load: float, seed: int) -> list[GpuState]:
    """All-balanced GPUs with replicas placed: each takes the smallest free balanced instance
    that hosts it, on the first GPU that has one (replicas that find none are not running)."""
    layout = apply_counts(gpu, balanced_counts(gpu)).layout
    assert layout is not None
    smallest_first = sorted(layout.instances, key=lambda i: _size(gpu.profile(i.profile)))
    free = [list(smallest_first) for _ in range(num_gpus)]
    used: list[set[Instance]] = [set() for _ in range(num_gpus)]
    demand = draw_demand(gpu, num_gpus, load, seed)
    for name in sorted(demand, key=lambda n: _size(gpu.profile(n)), reverse=True):
        want, g = gpu.profile(name), 0  # GPUs before g have no free instance for this profile
        for _ in range(demand[name]):
            slot = None
            while g < num_gpus:
                slot = next((i for i in free[g] if hosts(gpu.profile(i.profile), want)), None)
                if slot is not None:
                    break
                g += 1
            if slot is None:
                break
            free[g].remove(slot)
            used[g].add(slot)
    return [GpuState(g, gpu, layout, frozenset(used[g])) for g in range(num_gpus)]


def static_pending(gpu: MigGpu, fleet: Sequence[GpuState], demand: dict[str, int]) -> int:
    """New replicas that find no free balanced instance at least as large as theirs."""
    free = Counter(i.profile for g in fleet for i in g.layout.instances if i not in g.in_use)
    pending = 0
    for name in sorted(demand, key=lambda n: -gpu.profile(n).memory_slices):
        for _ in range(demand[name]):
            able = sorted(
                (p for p in free if free[p] and hosts(gpu.profile(p), gpu.profile(name))),
                key=lambda p: gpu.profile(p).memory_slices,
            )
            if able:
                free[able[0]] -= 1
            else:
                pending += 1
    return pending


def part_busy(sizes: Sequence[int], seeds: int, busy_load: float, wave_load: float) -> None:
    print(
        f"\nPart 2: all-balanced fleets {100 * busy_load:.0f} % busy, a new wave of "
        f"{100 * wave_load:.0f} %; sums over seeds (plan ms: mean / max)"
    )
    print(
        f"{'gpu':>11} {'fleet':>5} {'running':>7} {'new':>6} {'static pend':>11} | "
        f"{'keep: pend':>10} {'used':>6} {'reconf':>6} {'ms':>12} | "
        f"{'evict: pend':>11} {'used':>6} {'reconf':>6} {'evicted':>7} {'ms':>12}"
    )
    for model in GPU_MODELS:
        gpu = get_mig_gpu(model)
        for num_gpus in sizes:
            totals = Counter[str]()
            times: dict[bool, list[float]] = {False: [], True: []}
            for s in range(seeds):
                seed = 1000 * num_gpus + s
                fleet = busy_fleet(gpu, num_gpus, busy_load, seed)
                wave = draw_demand(gpu, num_gpus, wave_load, seed + 500)
                totals["running"] += sum(len(g.in_use) for g in fleet)
                totals["new"] += sum(wave.values())
                totals["static"] += static_pending(gpu, fleet, wave)
                for evict in (False, True):
                    plan, dt = timed_decide(fleet, wave, MigPlanSettings(allow_evict=evict))
                    key = "evict" if evict else "keep"
                    totals[f"{key} pend"] += sum(plan.unplaced.values())
                    totals[f"{key} used"] += plan.gpus_used
                    totals[f"{key} reconf"] += plan.reconfigured
                    totals[f"{key} evicted"] += plan.evicted
                    totals[f"{key} optimal"] += plan.optimal
                    times[evict].append(1e3 * dt)
            ms = {e: f"{np.mean(t):.0f}/{max(t):.0f}" for e, t in times.items()}
            print(
                f"{gpu.name:>11} {num_gpus:>5} {totals['running']:>7} {totals['new']:>6} "
                f"{totals['static']:>11} | {totals['keep pend']:>10} {totals['keep used']:>6} "
                f"{totals['keep reconf']:>6} {ms[False]:>12} | {totals['evict pend']:>11} "
                f"{totals['evict used']:>6} {totals['evict reconf']:>6} "
                f"{totals['evict evicted']:>7} {ms[True]:>12}"
            )
            if totals["keep optimal"] + totals["evict optimal"] < 2 * seeds:
                print(f"{'':>17} not every plan was proven optimal")


def part_stress(seed: int) -> None:
    """Worst case for grouping identical GPUs: every GPU on its own random maximal layout."""
    print("\nPart 3 (--stress): H100-80GB, every GPU a random maximal layout, half its instances")
    print("in use, a wave of 25 %; plan ms, GPUs used, proven optimal")
    gpu = get_mig_gpu("H100-80GB")
    rng = np.random.default_rng(seed)
    maximal = maximal_layouts(gpu)
    for num_gpus, modes in ((64, (False, True)), (256, (False, True)), (1000, (False,))):
        fleet = []
        for g in range(num_gpus):
            layout = maximal[int(rng.integers(len(maximal)))]
            in_use = frozenset(i for i in layout.instances if rng.random() < 0.5)
            fleet.append(GpuState(g, gpu, layout, in_use))
        wave = draw_demand(gpu, num_gpus, 0.25, seed + num_gpus)
        classes = len({(g.layout, g.in_use) for g in fleet})
        for evict in modes:
            plan, dt = timed_decide(fleet, wave, MigPlanSettings(allow_evict=evict))
            print(
                f"  {num_gpus:>5} GPUs, {classes:>4} classes, evict={evict!s:<5} "
                f"{1e3 * dt:>9.0f} ms  used {plan.gpus_used:>4}  optimal {plan.optimal}"
            )


def print_models() -> None:
    print("Replica sizes (need = bf16 weights + KV budget + 1 GiB, within 90 % of the instance):")
    for m in MODELS:
        sizes = ", ".join(f"{g}: {profile_for(get_mig_gpu(g), m).name}" for g in GPU_MODELS)
        print(f"  {m.name:<38} {m.need_gib:5.1f} GiB {m.compute_slices}g  -> {sizes}")
    for g in GPU_MODELS:
        t0 = time.perf_counter()
        decide(make_snapshot([GpuState(0, get_mig_gpu(g))], {}))
        print(f"  cold start {g}: {1e3 * (time.perf_counter() - t0):.0f} ms (layouts, cached)")
    print()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and seeds")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per size (default 5)")
    parser.add_argument("--load", type=float, default=0.75)
    parser.add_argument("--busy-load", type=float, default=0.50)
    parser.add_argument("--wave-load", type=float, default=0.35)
    parser.add_argument("--per-seed", action="store_true")
    parser.add_argument("--stress", action="store_true", help="also run part 3 (minutes)")
    args = parser.parse_args(argv)
    sizes = (8, 1000) if args.quick else (8, 64, 256, 1000)
    seeds = args.seeds or (2 if args.quick else 5)
    print_models()
    part_fresh(sizes, seeds, args.load, args.per_seed)
    part_busy(sizes, seeds, args.busy_load, args.wave_load)
    if args.stress:
        part_stress(seed=7)


if __name__ == "__main__":
    main()
