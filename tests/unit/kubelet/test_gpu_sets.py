"""GPU set choice: optimal against brute force, anti-stranding, and NVIDIA's best-effort."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.kubelet.gpu_sets import pick_gpus
from gpuplane.kubelet.gpuallocator import best_effort
from gpuplane.topology.collective import best_ring_bruteforce
from gpuplane.topology.from_matrix import load_topology_text_file
from gpuplane.topology.presets import load_preset
from tests.factories import all_pairs, make_topology
from tests.unit.kubelet.gpu_set_reference import Reference

FIXTURE_DIR = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "topologies"
FIXTURES = sorted(FIXTURE_DIR.glob("*.txt"))
PLX = FIXTURE_DIR / "pcie-8gpu-plx-switches-dual-socket.txt"
WORKSTATION = FIXTURE_DIR / "workstation-5gpu-pcie-phb-node-sys.txt"


def test_dgx1_volta_sequence_matches_go_gpuallocator_tests() -> None:
    topo = load_preset("dgx1-v100")
    free, groups = list(range(8)), []
    while group := best_effort(topo, free, [], 2):
        groups.append(group)
        free = [g for g in free if g not in group]
    assert groups == [[0, 3], [1, 2], [4, 7], [5, 6]]


def test_gpuallocator_edge_cases() -> None:
    topo = load_preset("dgx1-v100")
    assert best_effort(topo, [0, 1], [], 3) == []
    assert best_effort(topo, [0, 1, 2], [5], 2) == []
    assert best_effort(topo, [4, 5, 6, 7], [], 1) == [4]
    assert best_effort(topo, range(8), [1], 2) == [1, 2]


def test_one_gpu_pod_does_not_break_a_pair_or_a_whole_socket() -> None:
    topo = load_preset("seed-8gpu")  # NVLink squares 0-1-3-2 and 4-5-7-6, SYS between sockets
    # GPU 0 is busy: the 1-GPU pod goes to socket 0 and keeps an NVLink pair there.
    pick = pick_gpus(topo, [1, 2, 3, 4, 5, 6, 7], 1)
    assert pick is not None and pick.gpus[0] in (1, 2)
    # Socket 1 stays whole for a later 4-GPU TP group at 150 GB/s.
    group = pick_gpus(topo, [g for g in range(1, 8) if g != pick.gpus[0]], 4)
    assert group is not None and group.bottleneck_gbps == 150


def test_nvswitch_prefers_the_fuller_numa_node() -> None:
    topo = load_preset("dgx-h100")
    pick = pick_gpus(topo, [1, 2, 3, 4, 5, 6, 7], 1)  # GPU 0 busy on NUMA 0
    assert pick is not None and topo.gpus[pick.gpus[0]].numa == 0


def test_numa_aligned_and_required() -> None:
    topo = load_preset("seed-8gpu")
    assert pick_gpus(topo, [2, 3, 4, 5], 4, numa_aligned=True) is None
    pick = pick_gpus(topo, range(8), 2, required=[6])
    assert pick is not None and 6 in pick.gpus and pick.bottleneck_gbps == 150
    assert pick_gpus(topo, [0, 1], 2, required=[5]) is None


def test_large_uniform_domain_is_exact_by_numa_packing() -> None:
    topo = make_topology(all_pairs(32, "NV18"), numa_of_gpu=[g // 16 for g in range(32)])
    # 13 free on NUMA 0, 16 on NUMA 1: 12 GPUs go to the smaller group that holds them ...
    pick = pick_gpus(topo, list(range(3, 32)), 12)
    assert pick is not None and pick.exact and pick.numa_nodes == (0,) and len(pick.gpus) == 12
    # ... 14 only fit whole on NUMA 1.
    pick = pick_gpus(topo, list(range(3, 32)), 14)
    assert pick is not None and pick.numa_nodes == (1,)


@st.composite
def mesh(draw: st.DrawFn) -> tuple[list[list[str]], list[int], list[int], int]:
    n = draw(st.integers(3, 7))
    labels = [["X"] * n for _ in range(n)]
    for i, j in itertools.combinations(range(n), 2):
        labels[i][j] = labels[j][i] = draw(
            st.sampled_from(["NV1", "NV2", "NV4", "PIX", "PXB", "PHB", "NODE", "SYS"])
        )
    numa = [draw(st.integers(0, 1)) for _ in range(n)]
    free = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    size = draw(st.integers(1, len(free)))
    return labels, numa, sorted(free), size


@settings(max_examples=120, deadline=None)
@given(case=mesh())
def test_pick_is_the_brute_force_optimum_of_the_full_order(
    case: tuple[list[list[str]], list[int], list[int], int],
) -> None:
    labels, numa, free, size = case
    topo = make_topology(labels, numa_of_gpu=numa, model="V100-SXM2-16GB")
    pick = pick_gpus(topo, free, size)
    assert pick is not None and len(pick.gpus) == size and set(pick.gpus) <= set(free)
    ref = Reference(topo)
    # bottleneck, then path classes, then stranding: nothing else reaches a better key
    assert ref.key(free, pick.gpus) == ref.best_key(free, size)
    if size >= 2:
        best = max(
            best_ring_bruteforce(topo, c).bottleneck_gbps
            for c in itertools.combinations(free, size)
        )
        assert pick.bottleneck_gbps == best
        # go-gpuallocator never finds a wider ring than the exact choice
        other = best_effort(topo, free, [], size)
        assert best_ring_bruteforce(topo, other).bottleneck_gbps <= pick.bottleneck_gbps


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
def test_pick_is_the_brute_force_optimum_on_every_real_topology(fixture: Path) -> None:
    """Every set of free GPUs and every size on each real `nvidia-smi topo -m` capture."""
    topo = load_topology_text_file(fixture)
    ref = Reference(topo)
    for num_free in range(1, topo.num_gpus + 1):
        for free in itertools.combinations(range(topo.num_gpus), num_free):
            for size in range(1, num_free + 1):
                pick = pick_gpus(topo, free, size)
                assert pick is not None and pick.exact, (fixture.name, free, size)
                assert ref.key(free, pick.gpus) == ref.best_key(free, size), (free, size)


def test_pcie_switch_pair_beats_a_multi_switch_pair() -> None:
    topo = load_topology_text_file(PLX)  # PIX pairs 0-1, 2-3, 4-5, 6-7; PXB within a socket
    pick = pick_gpus(topo, [0, 2, 3, 4, 5, 6], 2)
    # [0, 2] (PXB) would break the PIX pair 2-3; go-gpuallocator also takes it
    assert pick is not None and pick.gpus == (2, 3)
    assert best_effort(topo, [0, 2, 3, 4, 5, 6], [], 2) == [2, 3]


def test_host_bridge_pair_beats_a_same_numa_pair() -> None:
    topo = load_topology_text_file(WORKSTATION)  # PHB pairs 1-2 and 3-4, NODE otherwise
    pick = pick_gpus(topo, [0, 1, 3, 4], 2)
    assert pick is not None and pick.gpus == (3, 4)  # not [1, 3] (NODE)


def test_one_gpu_pod_keeps_pcie_switch_pairs_whole() -> None:
    topo = load_topology_text_file(PLX)
    # GPUs 3 and 7 are busy: 2 and 6 have lost their switch partners, 0-1 and 4-5 are whole.
    pick = pick_gpus(topo, [0, 1, 2, 4, 5, 6], 1)
    assert pick is not None and pick.gpus in ((2,), (6,))


def test_equal_bandwidth_but_different_classes_is_not_called_exact() -> None:
    """20 PCIe GPUs at one link rate: PIX pairs, PXB otherwise. Too many sets to score, and
    NUMA packing would ignore the classes, so the greedy choice says it is not exact."""
    labels = all_pairs(20, "PXB")
    for g in range(0, 20, 2):
        labels[g][g + 1] = labels[g + 1][g] = "PIX"
    topo = make_topology(labels, model="L40S")
    pick = pick_gpus(topo, range(20), 6)
    assert pick is not None and not pick.exact and len(pick.gpus) == 6


@pytest.mark.parametrize("preset", ["dgx1-v100", "seed-8gpu", "dgx-h100", "l40s-8gpu-pcie"])
def test_full_node_sizes(preset: str) -> None:
    topo = load_preset(preset)
    for k in (1, 2, 4, 8):
        pick = pick_gpus(topo, range(8), k)
        assert pick is not None and pick.exact and len(pick.gpus) == k
