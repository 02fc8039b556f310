"""Benchmark: widest-ring search (threshold + bitmask DP) against the brute-force reference.

Run: ``.venv/bin/python bench/bench_topology.py`` (or ``make bench``). Both implementations run
side by side in this process on the same GPU sets; the table prints the time of each and the
speed-up ratio, and checks that both find the same bottleneck.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuplane.topology.collective import Ring, best_ring, best_ring_bruteforce
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.presets import load_preset
from gpuplane.topology.tp_bandwidth import tp_bandwidth


def _time(fn: Callable[[], Ring], repeats: int) -> tuple[float, Ring]:
    samples, result = [], fn()
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), result


def bench_rings(topo: NodeTopology, sizes: list[int], repeats: int) -> None:
    print(f"\n{topo.name}: best ring over GPUs 0..k-1, median of {repeats} runs")
    print(f"{'k':>3} {'brute force ms':>15} {'threshold+DP ms':>16} {'ratio':>8}  same bottleneck")
    for k in sizes:
        gpus = list(range(k))
        slow, ref = _time(lambda g=gpus: best_ring_bruteforce(topo, g), repeats)  # type: ignore[misc]
        fast, got = _time(lambda g=gpus: best_ring(topo, g), repeats)  # type: ignore[misc]
        same = ref.bottleneck_gbps == got.bottleneck_gbps
        print(f"{k:>3} {slow * 1e3:>15.3f} {fast * 1e3:>16.3f} {slow / fast:>7.1f}x  {same}")


def bench_tp(names: list[str]) -> None:
    print("\ntp_bandwidth over every k-subset of an 8-GPU node (the demo's table), one run each")
    print(f"{'preset':>16} {'k':>3} {'sets':>5} {'ms':>9}")
    for name in names:
        topo = load_preset(name)
        for k in (2, 4, 8):
            t0 = time.perf_counter()
            res = tp_bandwidth(topo, k)
            print(f"{name:>16} {k:>3} {res.num_sets:>5} {(time.perf_counter() - t0) * 1e3:>9.2f}")


def main() -> None:
    bench_rings(load_preset("dgx1-v100"), [4, 5, 6, 7, 8], repeats=5)
    bench_rings(load_preset("seed-8gpu"), [4, 6, 8], repeats=5)
    bench_tp(["dgx1-v100", "dgx-h100", "l40s-8gpu-pcie"])


if __name__ == "__main__":
    main()
