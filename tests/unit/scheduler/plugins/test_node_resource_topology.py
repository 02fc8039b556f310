"""NodeResourceTopologyMatch (scheduler-plugins) and GPUTopology (gpuplane) on small snapshots."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from gpuplane.api.qos import QosClass
from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU
from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.state import Placement
from gpuplane.scheduler.framework.types import ContainerInfo, PodInfo
from gpuplane.scheduler.plugins.noderesourcetopology.least_numa import least_numa_score, normalize
from gpuplane.scheduler.plugins.noderesourcetopology.numa_zones import (
    NumaZone,
    Weights,
    balanced_allocation,
    fit_numa,
    least_allocated,
    min_zone_score,
    most_allocated,
)
from gpuplane.topology.nrt import node_resource_topology
from gpuplane.topology.presets import load_preset
from tests.unit.scheduler.factories import GIB, make_cluster, make_pod, make_scheduler
from tests.unit.scheduler.plugins.helpers import plugin as _plugin
from tests.unit.scheduler.plugins.helpers import state

SEED = load_preset("seed-8gpu")  # 2 NUMA nodes, GPUs 0-3 on NUMA 0 and 4-7 on NUMA 1


def nrt_cluster(
    taken: list[list[int]], *, policy: str = "single-numa-node", scope: str = "container"
) -> ClusterSnapshot:
    """seed-8gpu nodes with ``taken[i]`` GPUs owned; each publishes its NRT."""
    matrix = np.full((len(taken), 8), 1000, dtype=np.int64)
    for i, gpus in enumerate(taken):
        matrix[i, gpus] = 0
    snap = make_cluster([0] * len(taken), matrix=matrix, cpu_m=224_000, mem=1024 * GIB)
    nrt = {
        f"n{i}": node_resource_topology(
            SEED, node_name=f"n{i}", policy=policy, scope=scope, allocated_gpus=gpus
        )
        for i, gpus in enumerate(taken)
    }
    hardware = {f"n{i}": SEED for i in range(len(taken))}
    return replace(snap, nrt=nrt, hardware=hardware)


def gpod(uid: str, gpus: int, *, qos: QosClass = QosClass.GUARANTEED, cpu_m: int = 8000) -> PodInfo:
    return replace(make_pod(uid, gpus, cpu_m=cpu_m), qos=qos)


def plugin(name: str, data: dict[str, Any] | None = None) -> Any:
    """The plugin as a profile that enables it at Filter and/or Score builds it."""
    points = ["filter", "score"] if name == "NodeResourceTopologyMatch" else ["score"]
    cfg = {"plugins": {p: {"enabled": [{"name": name}]} for p in points}, **(data or {})}
    return _plugin(name, cfg)


def profile(**extra: Any) -> Scheduler:
    cfg = {
        "plugins": {
            "filter": {"enabled": [{"name": "NodeResourceTopologyMatch"}]},
            "score": {"enabled": [{"name": "NodeResourceTopologyMatch"}]},
        },
        **extra,
    }
    return make_scheduler([ProfileConfig.model_validate(cfg)])


def test_filter_keeps_a_4_gpu_pod_off_a_node_whose_free_gpus_straddle_numa() -> None:
    # n0: GPUs 0,1 and 4,5 taken -> 2+2 free, no NUMA node has 4; n1: NUMA 1 whole.
    snap = nrt_cluster([[0, 1, 4, 5], [0, 1, 2]])
    nrtm = plugin("NodeResourceTopologyMatch")
    cs, st = state(snap)
    pod = gpod("a", 4)
    assert not nrtm.filter_node(cs, pod, st, 0).ok
    assert nrtm.filter_node(cs, pod, st, 0).message == "cannot align container"
    assert nrtm.filter_node(cs, pod, st, 1).ok
    assert list(nrtm.filter(cs, pod, st)) == [False, True]
    d = profile().decide(snap, [pod])
    assert [b.node for b in d.bindings] == ["n1"]


def test_other_policies_and_nodes_without_nrt_pass() -> None:
    pod = gpod("a", 4)
    for policy in ("none", "best-effort", "restricted"):
        cs, st = state(nrt_cluster([[0, 1, 4, 5]], policy=policy))
        assert plugin("NodeResourceTopologyMatch").filter_node(cs, pod, st, 0).ok
    cs, st = state(replace(nrt_cluster([[0, 1, 4, 5]]), nrt={}))
    assert plugin("NodeResourceTopologyMatch").filter_node(cs, pod, st, 0).ok


def test_best_effort_pods_pass_unless_they_ask_for_devices() -> None:
    cs, st = state(nrt_cluster([[0, 1, 4, 5]]))
    nrtm = plugin("NodeResourceTopologyMatch")
    be = replace(make_pod("cpu-only", 0, cpu_m=0, mem=0), qos=QosClass.BEST_EFFORT, requests={})
    assert nrtm.filter_node(cs, be, st, 0).ok
    be_gpu = replace(gpod("g", 4), qos=QosClass.BEST_EFFORT, requests={NVIDIA_GPU: 4})
    assert not nrtm.filter_node(cs, be_gpu, st, 0).ok


def test_burstable_cpu_never_constrains_but_guaranteed_cpu_does() -> None:
    cs, st = state(nrt_cluster([[]]))
    nrtm = plugin("NodeResourceTopologyMatch")
    # 200 cores: more than one NUMA node's 112 CPUs.
    assert nrtm.filter_node(cs, gpod("b", 1, qos=QosClass.BURSTABLE, cpu_m=200_000), st, 0).ok
    assert not nrtm.filter_node(cs, gpod("g", 1, cpu_m=200_000), st, 0).ok


def test_pod_scope_uses_the_effective_request_and_init_containers_are_checked_alone() -> None:
    pod = replace(
        gpod("p", 0),
        requests={NVIDIA_GPU: 4},
        containers=(
            ContainerInfo("init", {NVIDIA_GPU: 4}, init=True),
            ContainerInfo("a", {NVIDIA_GPU: 2}),
            ContainerInfo("b", {NVIDIA_GPU: 2}),
        ),
    )
    nrtm = plugin("NodeResourceTopologyMatch")
    # Container scope: a and b each fit (2+2 free on NUMA 0 and 1), but the init container's
    # 4 GPUs do not fit one zone.
    cs, st = state(nrt_cluster([[0, 1, 4, 5]], scope="container"))
    assert nrtm.filter_node(cs, pod, st, 0).message == "cannot align init container"
    cs, st = state(nrt_cluster([[0, 1, 4, 5]], scope="pod"))
    assert nrtm.filter_node(cs, pod, st, 0).message == "cannot align pod"
    pod2 = replace(pod, containers=pod.containers[1:])
    cs, st = state(nrt_cluster([[0, 1, 4, 5]], scope="container"))
    assert nrtm.filter_node(cs, pod2, st, 0).ok  # 2 on NUMA 0, then 2 on NUMA 1


def test_pods_assumed_in_the_same_decision_are_charged_to_their_zone() -> None:
    snap = nrt_cluster([[]])
    nrtm = plugin("NodeResourceTopologyMatch")
    cs, st = state(snap)
    first, second, third = gpod("a", 4), gpod("b", 4), gpod("c", 4)
    st.assume(first, Placement(0, (0, 1, 2, 3)))
    assert nrtm.filter_node(cs, second, st, 0).ok
    st.assume(second, Placement(0, (4, 5, 6, 7)))
    assert not nrtm.filter_node(cs, third, st, 0).ok


def test_fit_numa_picks_the_lowest_zone_and_rejects_unknown_native_resources() -> None:
    zones = [NumaZone(0, {NVIDIA_GPU: 1, CPU: 4000}), NumaZone(1, {NVIDIA_GPU: 4, CPU: 64000})]
    assert fit_numa(zones, {NVIDIA_GPU: 1}, QosClass.GUARANTEED, {NVIDIA_GPU: 5, CPU: 68000}) == 0
    assert fit_numa(zones, {NVIDIA_GPU: 2}, QosClass.GUARANTEED, {NVIDIA_GPU: 5, CPU: 68000}) == 1
    assert fit_numa(zones, {NVIDIA_GPU: 9}, QosClass.GUARANTEED, {NVIDIA_GPU: 5}) is None
    # Memory is native: no zone reporting it means nothing can align it.
    assert fit_numa(zones, {MEMORY: 1}, QosClass.GUARANTEED, {MEMORY: 10}) is None
    # An extended resource no zone reports is fine when the node offers it.
    assert fit_numa(zones, {"example.com/x": 1}, QosClass.GUARANTEED, {"example.com/x": 1}) == 0
    assert fit_numa(zones, {"example.com/x": 1}, QosClass.GUARANTEED, {}) is None


def test_score_strategies_match_the_upstream_formulas() -> None:
    w = Weights()
    zone = {CPU: 10_000, NVIDIA_GPU: 4}
    assert least_allocated({CPU: 2500, NVIDIA_GPU: 1}, zone, w) == ((10 - 3) * 100 // 10 + 75) // 2
    assert most_allocated({CPU: 2500, NVIDIA_GPU: 1}, zone, w) == (30 + 25) // 2
    assert least_allocated({NVIDIA_GPU: 5}, zone, w) == 0
    assert balanced_allocation({CPU: 5000, NVIDIA_GPU: 2}, zone, w) == 100
    assert balanced_allocation({CPU: 10_000, NVIDIA_GPU: 0}, zone, w) == int((1 - 0.5) * 100)
    assert (
        least_allocated({CPU: 2000, NVIDIA_GPU: 1}, zone, Weights({NVIDIA_GPU: 3}))
        == (80 + 3 * 75) // 4
    )
    zones = [
        NumaZone(0, {NVIDIA_GPU: 0}),
        NumaZone(1, {NVIDIA_GPU: 4}),
        NumaZone(2, {NVIDIA_GPU: 2}),
    ]
    # Zone 0 scores 0, so the running minimum is replaced: min over the rest.
    assert min_zone_score({NVIDIA_GPU: 1}, zones, "LeastAllocated", w) == 50


def test_least_numa_nodes() -> None:
    costs = {0: {0: 10, 1: 20, 2: 30}, 1: {0: 20, 1: 10, 2: 20}, 2: {0: 30, 1: 20, 2: 10}}
    zones = [NumaZone(n, {NVIDIA_GPU: 2}, costs[n]) for n in range(3)]
    assert (
        least_numa_score(QosClass.GUARANTEED, [*zones], [{NVIDIA_GPU: 2}])
        == normalize(1, True)
        == 94
    )
    fresh = [NumaZone(n, {NVIDIA_GPU: 2}, costs[n]) for n in range(3)]
    # 4 GPUs need two zones; (0,1) and (1,2) have the minimum average distance 15.
    assert least_numa_score(QosClass.GUARANTEED, fresh, [{NVIDIA_GPU: 4}]) == 100 - 24 + 6
    fresh = [NumaZone(n, {NVIDIA_GPU: 2}, costs[n]) for n in range(3)]
    fresh[1].resources[NVIDIA_GPU] = 0
    # Only (0,2) fits: distance 20 > 15, not the minimum.
    assert least_numa_score(QosClass.GUARANTEED, fresh, [{NVIDIA_GPU: 4}]) == 76
    assert least_numa_score(QosClass.GUARANTEED, fresh, [{"example.com/x": 1}]) == 100
    assert least_numa_score(QosClass.GUARANTEED, fresh, [{NVIDIA_GPU: 9}]) == 0


def test_non_guaranteed_pods_score_100_and_least_allocated_prefers_emptier_zones() -> None:
    snap = nrt_cluster([[0], [0, 1, 2, 4, 5, 6]])
    nrtm = plugin("NodeResourceTopologyMatch")
    cs, st = state(snap)
    assert nrtm.score_node(cs, gpod("b", 1, qos=QosClass.BURSTABLE), st, 0) == 100
    pod = gpod("g", 1)
    assert nrtm.score_node(cs, pod, st, 0) > nrtm.score_node(cs, pod, st, 1)
    most = plugin(
        "NodeResourceTopologyMatch",
        {
            "pluginConfig": [
                {
                    "name": "NodeResourceTopologyMatch",
                    "args": {"scoringStrategy": {"type": "MostAllocated"}},
                }
            ]
        },
    )
    assert most.score_node(cs, pod, st, 0) < most.score_node(cs, pod, st, 1)


def test_bad_scoring_strategy_is_a_config_error() -> None:
    with pytest.raises(Exception, match=r"scoringStrategy|type"):
        plugin(
            "NodeResourceTopologyMatch",
            {
                "pluginConfig": [
                    {
                        "name": "NodeResourceTopologyMatch",
                        "args": {"scoringStrategy": {"type": "Fastest"}},
                    }
                ]
            },
        )


def test_gpu_topology_prefers_a_whole_nvlink_island() -> None:
    # n0: GPUs 1 and 3 taken: free 0,2 (NV6) + 4..7; n1: free 0,1 and 4,5 -> every island split.
    snap = nrt_cluster([[1, 3], [2, 3, 6, 7]], policy="none")
    gt = plugin("GPUTopology")
    cs, st = state(snap)
    pod = gpod("tp4", 4)
    scores = gt.score(cs, pod, st, np.array([0, 1]))
    assert scores[0] > scores[1]
    assert list(gt.score(cs, gpod("cpu", 0), st, np.array([0, 1]))) == [100, 100]


def test_gpu_topology_needs_a_numa_aligned_set_under_single_numa_node() -> None:
    snap = nrt_cluster([[0, 1, 4, 5]])
    gt = plugin("GPUTopology")
    cs, st = state(snap)
    assert gt.score_node(cs, gpod("tp4", 4), st, 0) == 0
    assert gt.score_node(cs, gpod("tp2", 2), st, 0) > 0


def test_gpu_topology_packs_single_gpu_pods() -> None:
    snap = nrt_cluster([[0, 1, 2], []], policy="none")
    gt = plugin("GPUTopology")
    cs, st = state(snap)
    scores = gt.score(cs, gpod("one", 1), st, np.array([0, 1]))
    assert scores[0] > scores[1]
