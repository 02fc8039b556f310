"""Benchmark: gpuplane's GPU set choice against NVIDIA go-gpuallocator's best-effort policy.

Run: ``make bench-gpu-sets`` (or ``.venv/bin/python bench/gpu_sets.py``). For each preset, one
seeded stream of GPU requests (sizes 1, 2, 4, 8 with weights 50/25/15/10 %, each holding its GPUs
for an exponential time) runs through both policies side by side in this process, each on its
own copy of the node. Printed per policy: the mean ring bottleneck of multi-GPU sets (GB/s per
direction), the share of multi-GPU sets inside one NUMA node, the shares of multi-GPU sets whose
every GPU pair is NVLink or PIX (one PCIe switch, ``1 SW %``), at most PXB (NCCL's default reach
for direct peer-to-peer, ``P2P %``) and at most PHB (one host bridge, ``1 HB %``), requests that
found enough free GPUs, and the mean decision time.

Besides the presets, the PCIe-only ``nvidia-smi topo -m`` captures in ``shared/data/topologies``
run too (when that folder sits beside the repository): there all PCIe paths have one bandwidth,
so ``P2P %`` shows what the bottleneck column cannot.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from gpuplane.kubelet.gpu_sets import pick_gpus
from gpuplane.kubelet.gpuallocator import best_effort
from gpuplane.topology.collective import best_ring
from gpuplane.topology.from_matrix import load_topology_text_file
from gpuplane.topology.links import LinkClass
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.presets import load_preset

Chooser = Callable[[NodeTopology, Sequence[int], int], list[int]]

PRESETS = ("dgx1-v100", "seed-8gpu", "dgx-h100", "l40s-8gpu-pcie", "a10-4gpu-pcie")
FIXTURE_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "topologies"
PCIE_CAPTURES = {  # short name -> capture file stem
    "plx-8gpu (topo -m)": "pcie-8gpu-plx-switches-dual-socket",
    "rtx4090 (topo -m)": "rtx4090-8gpu-pcie-dual-socket",
    "l40s-4gpu (topo -m)": "l40s-4gpu-pcie-dual-socket",
    "5gpu-ws (topo -m)": "workstation-5gpu-pcie-phb-node-sys",
}
# NCCL's default P2P level (src/graph/paths.cc ncclTopoCheckP2p): PXB, NVLink always.
ONE_SWITCH = frozenset({LinkClass.NV, LinkClass.PIX})
DIRECT_P2P = ONE_SWITCH | {LinkClass.PXB}
ONE_HOST_BRIDGE = DIRECT_P2P | {LinkClass.PHB}


def topologies() -> list[tuple[str, NodeTopology]]:
    out = [(name, load_preset(name)) for name in PRESETS]
    for name, stem in PCIE_CAPTURES.items():
        path = FIXTURE_DIR / f"{stem}.txt"
        if path.exists():
            out.append((name, load_topology_text_file(path)))
    return out


def within(topo: NodeTopology, gpus: Sequence[int], classes: frozenset[LinkClass]) -> bool:
    """Every pair of ``gpus`` has one of ``classes``."""
    return all(topo.links[a][b].cls in classes for a, b in itertools.combinations(gpus, 2))


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
    one_sw, p2p, one_hb = 0, 0, 0
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
            one_sw += within(topo, gpus, ONE_SWITCH)
            p2p += within(topo, gpus, DIRECT_P2P)
            one_hb += within(topo, gpus, ONE_HOST_BRIDGE)
    return {
        "placed": placed,
        "mean_bottleneck": float(np.mean(widths)) if widths else 0.0,
        "one_numa_pct": 100.0 * aligned / multi if multi else 0.0,
        "one_sw_pct": 100.0 * one_sw / multi if multi else 0.0,
        "p2p_pct": 100.0 * p2p / multi if multi else 0.0,
        "one_hb_pct": 100.0 * one_hb / multi if multi else 0.0,
        "ms_per_pick": 1e3 * wall / max(placed, 1),
    }


def main() -> None:
    print(
        f"{'topology':>19} {'policy':>12} {'placed':>7} {'bottleneck':>11} {'one NUMA %':>11} "
        f"{'1 SW %':>6} {'P2P %':>6} {'1 HB %':>6} {'ms/pick':>8}"
    )
    for name, topo in topologies():
        results = {
            p: run(topo, f, seed=1, n=3000)
            for p, f in (("gpuallocator", allocator_choice), ("gpuplane", gpuplane_choice))
        }
        for policy, r in results.items():
            print(
                f"{name:>19} {policy:>12} {r['placed']:>7.0f} {r['mean_bottleneck']:>11.1f} "
                f"{r['one_numa_pct']:>11.1f} {r['one_sw_pct']:>6.1f} {r['p2p_pct']:>6.1f} "
                f"{r['one_hb_pct']:>6.1f} "
                f"{r['ms_per_pick']:>8.3f}"
            )
        ratio = results["gpuplane"]["mean_bottleneck"] / max(
            results["gpuallocator"]["mean_bottleneck"], 1e-9
        )
        print(f"{name:>19} {'ratio':>12} {'':>7} {ratio:>10.2f}x")


if __name__ == "__main__":
    main()
