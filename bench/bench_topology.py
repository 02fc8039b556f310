"""Benchmark: widest-ring search (threshold + bitmask DP) against the brute-force reference.

Run: ``make bench`` (or ``.venv/bin/python bench/bench_topology.py``). Both implementations run
side by side in this process on the same GPU sets; the table prints the time of each and the
speed-up ratio, and checks that both find the same bottleneck.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from gpuplane.core.ids import GpuIndex, GpuModelName, NumaId
from gpuplane.topology.bandwidth import BandwidthModel
from gpuplane.topology.collective import Ring, best_ring, best_ring_bruteforce, greedy_ring_order
from gpuplane.topology.links import SELF, Link, LinkClass, nvlink
from gpuplane.topology.model import Gpu, NodeTopology, NumaNode
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


def twisted_mesh(n: int) -> NodeTopology:
    """n GPUs, NV2 between i and i+1, NV1 between i and i+3, SYS otherwise: a sparse mesh."""

    def link(i: int, j: int) -> Link:
        d = (j - i) % n
        if i == j:
            return SELF
        if d in (1, n - 1):
            return nvlink(2)
        if d in (3, n - 3):
            return nvlink(1)
        return Link(LinkClass.SYS)

    return _node(f"twisted-mesh-{n}", n, link)


def bridged_islands(n: int) -> NodeTopology:
    """Two all-NV4 islands joined by a single NV4 link: no NV4 ring exists, so the exact search
    must rule it out over every subset before it settles on the next width (the DP's worst case)."""
    half = n // 2

    def link(i: int, j: int) -> Link:
        if i == j:
            return SELF
        if (i < half) == (j < half) or {i, j} == {half - 1, half}:
            return nvlink(4)
        return Link(LinkClass.SYS)

    return _node(f"bridged-islands-{n}", n, link)


def _node(name: str, n: int, link: Callable[[int, int], Link]) -> NodeTopology:
    links = tuple(tuple(link(i, j) for j in range(n)) for i in range(n))
    bw = BandwidthModel(nvlink_gbps_per_link=25.0, pcie_gbps=31.5)
    gpus = tuple(
        Gpu(index=GpuIndex(i), model=GpuModelName("V100-SXM2-16GB"), numa=NumaId(0))
        for i in range(n)
    )
    return NodeTopology(
        name=name,
        gpus=gpus,
        nics=(),
        numa_nodes=(NumaNode(id=NumaId(0)),),
        links=links,
        bandwidth_gbps=tuple(tuple(bw.for_link(c) for c in row) for row in links),
    )


def bench_large(make: Callable[[int], NodeTopology], sizes: list[int]) -> None:
    print(
        f"\n{make(4).name.rsplit('-', 1)[0]}: exact threshold+DP against the greedy+2-opt "
        "heuristic it falls back to above 16 GPUs"
    )
    print(
        f"{'n':>3} {'greedy ms':>10} {'greedy GB/s':>12} {'exact ms':>10} {'exact GB/s':>11}"
        f" {'ratio':>8}"
    )
    for n in sizes:
        topo = make(n)
        bw = [list(r) for r in topo.bandwidth_gbps]
        t0 = time.perf_counter()
        order = greedy_ring_order(bw, n)
        greedy_s = time.perf_counter() - t0
        greedy_bw = min(bw[order[i]][order[(i + 1) % n]] for i in range(n))
        t0 = time.perf_counter()
        ring = best_ring(topo, range(n))
        exact_s = time.perf_counter() - t0
        print(
            f"{n:>3} {greedy_s * 1e3:>10.2f} {greedy_bw:>12g} {exact_s * 1e3:>10.2f} "
            f"{ring.bottleneck_gbps:>11g} {exact_s / greedy_s:>7.1f}x"
        )


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
    bench_large(twisted_mesh, [10, 12, 14, 16])
    bench_large(bridged_islands, [8, 10, 12, 14, 16])
    bench_tp(["dgx1-v100", "dgx-h100", "l40s-8gpu-pcie"])


if __name__ == "__main__":
    main()
