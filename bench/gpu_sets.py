"""Benchmark: gpuplane's GPU set choice against NVIDIA go-gpuallocator's best-effort policy.

Run: ``make bench-gpu-sets`` (or ``.venv/bin/python bench/gpu_sets.py``). For each preset, one
seeded stream of GPU requests (sizes 1, 2, 4, 8 with weights 50/25/15/10 %, each holding its GPUs
for an exponential time) runs through both policies side by side in this process, each on its
own copy of the node. Printed per policy: the mean ring bottleneck of multi-GPU sets (GB/s per
direction), the share of multi-GPU sets inside one NUMA node, requests that found enough free
GPUs, and the mean decision time.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence

import numpy as np

from gpuplane.kubelet.gpu_sets import pick_gpus
from gpuplane.kubelet.gpuallocator import best_effort
from gpuplane.topology.collective import best_ring
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.presets import load_preset

Chooser = Callable[[NodeTopology, Sequence[int], int], list[int]]


def gpuplane_choice(topo: NodeTopology, free: Sequence[int], size: int) -> list[int]:
    pick = pick_gpus(topo, free, size)
    return list(pick.gpus) if pick else []


def allocator_choice(topo: NodeTopology, free: Sequence[int], size: int) -> list[int]:
    return best_effort(topo, free, [], size)


def run(topo: NodeTopology, choose: Chooser, seed: int, n: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    free = set(range(topo.num_gpus))
    releases: list[tuple[float, int, list[int]]] = []
    t, placed, multi, aligned, widths, wall = 0.0, 0, 0, 0, [], 0.0
    for i in range(n):
        t += float(rng.exponential(1.0))
        while releases and releases[0][0] <= t:
            free.update(heapq.heappop(releases)[2])
        size = int(rng.choice([1, 2, 4, 8], p=[0.5, 0.25, 0.15, 0.1]))
        hold = float(rng.exponential(6.0))
        if size > len(free):
            continue
        t0 = time.perf_counter()
        gpus = choose(topo, sorted(free), size)
        wall += time.perf_counter() - t0
        placed += 1
        free.difference_update(gpus)
        heapq.heappush(releases, (t + hold, i, gpus))
        if size > 1:
            multi += 1
            widths.append(best_ring(topo, gpus).bottleneck_gbps)
            aligned += len({topo.gpus[g].numa for g in gpus}) == 1
    return {
        "placed": placed,
        "mean_bottleneck": float(np.mean(widths)) if widths else 0.0,
        "one_numa_pct": 100.0 * aligned / multi if multi else 0.0,
        "ms_per_pick": 1e3 * wall / max(placed, 1),
    }


def main() -> None:
    print(
        f"{'preset':>16} {'policy':>12} {'placed':>7} {'bottleneck':>11} {'one NUMA %':>11} "
        f"{'ms/pick':>8}"
    )
    for name in ("dgx1-v100", "seed-8gpu", "dgx-h100", "l40s-8gpu-pcie"):
        topo = load_preset(name)
        results = {
            p: run(topo, f, seed=1, n=3000)
            for p, f in (("gpuallocator", allocator_choice), ("gpuplane", gpuplane_choice))
        }
        for policy, r in results.items():
            print(
                f"{name:>16} {policy:>12} {r['placed']:>7.0f} {r['mean_bottleneck']:>11.1f} "
                f"{r['one_numa_pct']:>11.1f} {r['ms_per_pick']:>8.3f}"
            )
        ratio = results["gpuplane"]["mean_bottleneck"] / max(
            results["gpuallocator"]["mean_bottleneck"], 1e-9
        )
        print(f"{name:>16} {'ratio':>12} {'':>7} {ratio:>10.2f}x")


if __name__ == "__main__":
    main()
