"""Benchmark: the OpenB grid through ``gpuplane sweep``'s local pool and Ray, against the
hand-made process pool bench/openb_all.py used before (issue 18).

Run: ``.venv/bin/python bench/sweep.py`` (defaults: a documented subset of
examples/sweeps/openb-grid.yaml: the traces cpu0, default, gpushare40 and multigpu50, all seven
policies, seeds 42-43 = 56 runs; ``--traces all --seeds 42-51`` is the whole 1,400-run grid;
``--workers 1,2``; ``--repeats 2``; ``--no-ray`` without Ray).

For each worker count, side by side in this process and interleaved over the repeats:

1. ``handmade``: bench/openb_all.py's former pool, kept here as the baseline: a
   ``multiprocessing.Pool`` whose workers load the CSV tables (``lru_cache``) and run
   ``run_seed`` per (trace, policy, seed) with ``imap_unordered``;
2. ``local``: ``load_sweep`` (reads and checks the sweep file and the tables) + ``run_sweep`` on
   ``LocalPool(workers)``, writing results.csv as points finish;
3. ``ray``: the same on ``RayPool`` with Ray already started here (``ray.init(num_cpus=workers)``;
   its start-up time is printed on its own, as a cluster is started once for many sweeps).

First, the executors' own cost: the grid's 1,400 points on a base that does nothing (``NullBase``),
2 workers, against a bare ``Pool(2).imap_unordered`` of the same no-op; this is what a sweep adds
per point whatever the machine's other load (``--overhead-only`` stops there).

Reported: wall time per configuration (the median over repeats), overhead per point against the
hand-made pool ((wall - handmade) / points) and as a percentage, the speed-up from 1 to N
workers, and whether every configuration computed the same numbers. The machine may be shared:
compare ratios within one run, not wall times across runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from functools import lru_cache
from multiprocessing import Pool
from pathlib import Path
from typing import Any

from gpuplane.scheduler.openb.experiment import run_seed
from gpuplane.scheduler.openb.trace import NodeTable, PodTable, load_nodes, load_pods
from gpuplane.sweep import Cell, LocalPool, Point, RayPool, Sweep, load_sweep, run_sweep
from gpuplane.sweep.bases.registry import bases

REPO = Path(__file__).resolve().parents[1]
GRID = REPO / "examples/sweeps/openb-grid.yaml"
SUBSET_TRACES = "cpu0,default,gpushare40,multigpu50"


@lru_cache(maxsize=4)
def _tables(nodes: str, pods: str) -> tuple[NodeTable, PodTable]:
    return load_nodes(Path(nodes)), load_pods(Path(pods))


def _task(args: tuple[str, str, str, str, int]) -> tuple[str, str, int, float | None]:
    trace, nodes, pods, policy, seed = args
    node_table, pod_table = _tables(nodes, pods)
    result = run_seed(node_table, pod_table, policy, seed)
    return trace, policy, seed, result.unallocated_pct_at_100


def handmade(sweep: Sweep, workers: int) -> tuple[float, dict[tuple[str, str, int], Any]]:
    base: Any = sweep.base
    nodes = str(base.data / base.settings.nodes)
    tasks = [
        (
            str(p.value("trace")),
            nodes,
            str(base.data / f"openb_pod_list_{p.value('trace')}.csv"),
            str(p.value("policy")),
            int(p.value("seed")),
        )
        for p in sweep.points
    ]
    started = time.perf_counter()
    with Pool(workers) as pool:
        rows = list(pool.imap_unordered(_task, tasks))
    wall = time.perf_counter() - started
    return wall, {(t, p, s): v for t, p, s, v in rows}


def subset(traces: str, seeds: str) -> Sweep:
    full = load_sweep(GRID, bases())
    wanted_traces = None if traces == "all" else set(traces.split(","))
    low, _, high = seeds.partition("-")
    wanted_seeds = set(range(int(low), int(high or low) + 1))
    points = tuple(
        p
        for p in full.points
        if (wanted_traces is None or p.value("trace") in wanted_traces)
        and p.value("seed") in wanted_seeds
    )
    return dataclasses.replace(full, points=points)


def via_sweep(points: Sweep, executor: Any) -> tuple[float, dict[tuple[str, str, int], Any]]:
    """load_sweep (as the CLI does: file, checks, tables) + run_sweep, timed together."""
    started = time.perf_counter()
    sweep = load_sweep(GRID, bases())
    sweep = dataclasses.replace(sweep, points=points.points)
    with tempfile.TemporaryDirectory() as out:
        result = run_sweep(sweep, executor, Path(out))
    wall = time.perf_counter() - started
    values = {
        (str(r["trace"]), str(r["policy"]), int(str(r["seed"]))): r["unallocated_pct_at_100"]
        for r in result.records()
    }
    return wall, values


@dataclasses.dataclass(frozen=True, slots=True)
class NullBase:
    """A base whose points do nothing: what is left is the executor's own cost per point."""

    kind = "null"

    def evaluate(self, point: Point, figures: tuple[str, ...]) -> dict[str, Cell]:
        return {"x": point.index}


def _null(point: Point) -> dict[str, Cell]:
    return {"x": point.index}


def overhead(repeats: int, ray: Any) -> None:
    """Executor cost per point: the grid's 1,400 points on a base that does nothing, 2 workers,
    against a bare ``Pool(2).imap_unordered`` of the same no-op (the hand-made pool's own cost)."""
    grid = load_sweep(GRID, bases())
    sweep = dataclasses.replace(grid, base=NullBase(), figures=("x",), digest="null")
    n = len(sweep.points)
    walls: dict[str, list[float]] = {"bare pool": [], "local": [], "ray": []}
    for _ in range(repeats):
        started = time.perf_counter()
        with Pool(2) as pool:
            list(pool.imap_unordered(_null, sweep.points))
        walls["bare pool"].append(time.perf_counter() - started)
        for name in ("local", "ray"):
            if name == "ray":
                if ray is None:
                    continue
                ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            executor = LocalPool(2) if name == "local" else RayPool("local", 2)
            started = time.perf_counter()
            with tempfile.TemporaryDirectory() as out:
                run_sweep(sweep, executor, Path(out))
            walls[name].append(time.perf_counter() - started)
            if name == "ray":
                ray.shutdown()
    print(f"\nexecutor cost per point ({n} no-op points, 2 workers, median of {repeats}):")
    for name, values in walls.items():
        if values:
            wall = statistics.median(values)
            print(f"| {name} | {wall:.2f} s | {wall / n * 1000:.2f} ms per point |")


def _measure(points: Sweep, workers: int, repeats: int, ray: Any) -> dict[str, Any]:
    walls: dict[str, list[float]] = {"handmade": [], "local": []}
    values: dict[str, dict[tuple[str, str, int], Any]] = {}
    ray_start_s = None
    if ray is not None:
        walls["ray"] = []
    for _ in range(repeats):
        wall, values["handmade"] = handmade(points, workers)
        walls["handmade"].append(wall)
        wall, values["local"] = via_sweep(points, LocalPool(workers))
        walls["local"].append(wall)
        if ray is not None:
            started = time.perf_counter()
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
            ray_start_s = time.perf_counter() - started
            try:
                wall, values["ray"] = via_sweep(points, RayPool("local", workers))
            finally:
                ray.shutdown()
            walls["ray"].append(wall)
    same = all(v == values["handmade"] for v in values.values())
    return {
        "workers": workers,
        "wall_s": {k: statistics.median(v) for k, v in walls.items()},
        "all_s": walls,
        "ray_start_s": ray_start_s,
        "same_results": same,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", default=SUBSET_TRACES, help="comma-separated, or all")
    parser.add_argument("--seeds", default="42-43")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument(
        "--overhead-only", action="store_true", help="only the executors' cost per point"
    )
    args = parser.parse_args(argv)
    ray = None
    if not args.no_ray:
        import ray  # type: ignore[no-redef]
    overhead(3, ray)
    if args.overhead_only:
        return 0
    points = subset(args.traces, args.seeds)
    n = len(points.points)
    print(f"{n} points of {GRID.name}; workers {args.workers}; {args.repeats} repeats", flush=True)
    results = [_measure(points, int(w), args.repeats, ray) for w in args.workers.split(",")]
    print("\n| workers | configuration | wall s (median) | overhead per point | vs hand-made |")
    print("|---|---|---|---|---|")
    for r in results:
        base = r["wall_s"]["handmade"]
        for name, wall in r["wall_s"].items():
            over = (wall - base) / n * 1000
            print(
                f"| {r['workers']} | {name} | {wall:.1f} | {over:+.0f} ms | "
                f"{(wall / base - 1) * 100:+.1f} % |"
            )
    first = results[0]
    for r in results[1:]:
        for name in r["wall_s"]:
            speedup = first["wall_s"][name] / r["wall_s"][name]
            print(f"speed-up {first['workers']} -> {r['workers']} workers, {name}: {speedup:.2f}x")
    for r in results:
        if r["ray_start_s"] is not None:
            print(f"Ray start-up with {r['workers']} CPUs: {r['ray_start_s']:.1f} s (not counted)")
        print(f"{r['workers']} workers: every wall {r['all_s']}; same results: {r['same_results']}")
    return 0 if all(r["same_results"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
