"""Kubelet admission through the Topology Manager: policies, scopes, providers, allocation."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from gpuplane.kubelet.admission import (
    REJECT_MESSAGE,
    REJECT_REASON,
    ContainerRequest,
    admit_pod,
    node_state,
)
from gpuplane.kubelet.cpu_manager import CpuTopology, allocate_cpus, cpu_hints, exclusive_cpus
from gpuplane.kubelet.gpu_sets import pick_gpus
from gpuplane.kubelet.topology_manager.bitmask import BitMask
from gpuplane.kubelet.topology_manager.policy import PolicyName
from gpuplane.topology.presets import load_preset

SEED = load_preset("seed-8gpu")  # 4 GPUs per socket, 112 CPUs per socket with SMT


def choose(candidates: Iterable[int], size: int) -> list[int] | None:
    pick = pick_gpus(SEED, list(candidates), size)
    return list(pick.gpus) if pick else None


def test_exclusive_cpus_only_for_guaranteed_integer_requests() -> None:
    assert exclusive_cpus(True, 4000) == 4
    assert exclusive_cpus(True, 4500) == 0
    assert exclusive_cpus(False, 4000) == 0


def test_cpu_hints_and_whole_core_allocation() -> None:
    topo = CpuTopology(
        {0: (0, 1, 4, 5), 1: (2, 3, 6, 7)}, {0: 4, 4: 0, 1: 5, 5: 1, 2: 6, 6: 2, 3: 7, 7: 3}
    )
    hints = cpu_hints(topo, 2, (), ())["cpu"]
    assert hints is not None
    pairs = [(h.affinity.nodes(), h.preferred) for h in hints if h.affinity is not None]
    assert len(pairs) == len(hints)
    assert sorted(pairs) == [
        ([0], True),
        ([0, 1], False),
        ([1], True),
    ]
    assert cpu_hints(topo, 9, (), ()) == {"cpu": []}
    assert cpu_hints(topo, 0, (), ()) == {"cpu": None}
    assert allocate_cpus(topo, 2, {0}, BitMask.of([1])) == (2, 6)  # a whole core on NUMA 1
    assert allocate_cpus(topo, 3, (), BitMask.of([0])) == (0, 1, 4)


def test_siblings_are_inferred_from_cpu_lists() -> None:
    state = node_state(SEED)
    assert state.cpu_topology is not None
    assert state.cpu_topology.siblings[0] == 112 and state.cpu_topology.siblings[56] == 168


@pytest.mark.parametrize(
    ("policy", "admit"),
    [
        (PolicyName.SINGLE_NUMA_NODE, False),
        (PolicyName.RESTRICTED, False),
        (PolicyName.BEST_EFFORT, True),
        (PolicyName.NONE, True),
    ],
)
def test_four_gpus_split_across_sockets(policy: PolicyName, admit: bool) -> None:
    # GPUs 0,1 and 4,5 are busy: a 4-GPU pod can only get 2 + 2 across the sockets.
    state = node_state(SEED, policy=policy, taken_gpus=frozenset({0, 1, 4, 5}))
    result = admit_pod(
        state, [ContainerRequest("main", 8000, 2**34, 4)], guaranteed=True, choose=choose
    )
    assert result.admit is admit
    if not admit:
        assert (result.reason, result.message) == (REJECT_REASON, REJECT_MESSAGE)
    else:
        assert result.gpus == (2, 3, 6, 7)


def test_aligned_allocation_on_one_socket() -> None:
    state = node_state(SEED, taken_gpus=frozenset({0}))
    result = admit_pod(
        state, [ContainerRequest("main", 16000, 2**34, 4)], guaranteed=True, choose=choose
    )
    assert result.admit and result.gpus == (4, 5, 6, 7)
    alloc = result.allocations["main"]
    assert alloc.affinity == (1,)
    assert len(alloc.cpus) == 16 and all(56 <= c < 112 or c >= 168 for c in alloc.cpus)


def test_container_scope_vs_pod_scope() -> None:
    # Two containers of 3 GPUs each: each fits one socket alone (container scope admits),
    # together 6 GPUs never fit one socket (pod scope rejects under single-numa-node).
    containers = [ContainerRequest("a", 4000, 0, 3), ContainerRequest("b", 4000, 0, 3)]
    per_container = admit_pod(node_state(SEED), containers, guaranteed=True, choose=choose)
    assert per_container.admit
    assert {per_container.allocations["a"].affinity, per_container.allocations["b"].affinity} == {
        (0,),
        (1,),
    }
    pod = admit_pod(node_state(SEED, scope="pod"), containers, guaranteed=True, choose=choose)
    assert not pod.admit and pod.reason == REJECT_REASON


def test_init_container_resources_are_reused() -> None:
    containers = [
        ContainerRequest("init", 4000, 0, 4, init=True),
        ContainerRequest("main", 4000, 0, 4),
    ]
    result = admit_pod(
        node_state(SEED, taken_gpus=frozenset({0, 1, 2, 3})),
        containers,
        guaranteed=True,
        choose=choose,
    )
    assert result.admit and result.allocations["main"].gpus == (4, 5, 6, 7)


def test_burstable_pods_get_no_cpu_hint() -> None:
    state = node_state(SEED, taken_gpus=frozenset({0, 1, 4, 5}))
    # Not guaranteed: CPUs from the shared pool, only the GPU hint counts (still cross-socket).
    result = admit_pod(
        state, [ContainerRequest("main", 8000, 0, 2)], guaranteed=False, choose=choose
    )
    assert result.admit and not result.allocations["main"].cpus
