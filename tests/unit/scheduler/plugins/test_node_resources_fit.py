from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.types import GPU_MILLI, BoundPod, PodInfo
from gpuplane.scheduler.plugins.noderesources.fit import is_scalar
from tests.unit.scheduler.factories import GIB, make_cluster, make_pod
from tests.unit.scheduler.plugins.helpers import plugin, state


def reasons(p: Any, snap: ClusterSnapshot, pod: PodInfo) -> list[list[str]]:
    cs, st = state(snap)
    p.pre_filter(cs, pod, st)
    return [list(p.filter_node(cs, pod, st, i).reasons) for i in range(st.num_nodes)]


def test_filter_reasons_name_every_short_resource() -> None:
    snap = make_cluster([1, 8, 8], cpu_m=4000, pods=1, used_cpu_m=[0, 3500, 0])
    fit = plugin("NodeResourcesFit")
    pod = make_pod("a", 2, cpu_m=1000)
    got = reasons(fit, snap, pod)
    assert got[0] == ["Insufficient nvidia.com/gpu"]
    assert got[1] == ["Insufficient cpu"]
    assert got[2] == []
    cs, st = state(snap)
    fit.pre_filter(cs, pod, st)
    assert fit.filter(cs, pod, st).tolist() == [False, False, True]


def test_too_many_pods_and_unknown_resources() -> None:
    from tests.unit.scheduler.factories import bound

    snap = make_cluster([8], pods=1, bound_pods=[bound("x", "n0")])
    fit = plugin("NodeResourcesFit")
    assert reasons(fit, snap, make_pod("a"))[0] == ["Too many pods"]
    odd = replace(make_pod("b"), requests={"example.com/fpga": 1})
    assert reasons(fit, make_cluster([8]), odd)[0] == ["Insufficient example.com/fpga"]


def test_ignored_resources_are_skipped() -> None:
    args = {
        "pluginConfig": [
            {"name": "NodeResourcesFit", "args": {"ignoredResourceGroups": ["example.com"]}}
        ]
    }
    fit = plugin("NodeResourcesFit", args)
    pod = replace(make_pod("b"), requests={"example.com/fpga": 1})
    assert reasons(fit, make_cluster([8]), pod)[0] == []


def test_least_allocated_score() -> None:
    # cpu: (64000 - 16000 - 1000) * 100 // 64000 = 73; memory: (512 - 4) * 100 // 512 = 99
    snap = make_cluster([8, 8], used_cpu_m=[16_000, 0])
    fit = plugin("NodeResourcesFit")
    cs, st = state(snap)
    pod = make_pod("a", 1, cpu_m=1000, mem=4 * GIB)
    scores = fit.score(cs, pod, st, np.array([0, 1]))
    assert scores.tolist() == [(73 + 99) // 2, (98 + 99) // 2]
    assert [fit.score_node(cs, pod, st, i) for i in (0, 1)] == scores.tolist()


def test_most_allocated_score_and_custom_resources() -> None:
    args = {
        "pluginConfig": [
            {
                "name": "NodeResourcesFit",
                "args": {
                    "scoringStrategy": {
                        "type": "MostAllocated",
                        "resources": [{"name": "nvidia.com/gpu", "weight": 3}, {"name": "cpu"}],
                    }
                },
            }
        ]
    }
    fit = plugin("NodeResourcesFit", args)
    snap = make_cluster([2, 8], used_cpu_m=[32_000, 0])
    cs, st = state(snap)
    pod = make_pod("a", 2, cpu_m=0)
    # n0: gpu (6 + 2) / 8 = 100, cpu 50 -> (300 + 50) // 4 = 87; n1: gpu 25, cpu 0 -> 75 // 4
    assert fit.score(cs, pod, st, np.array([0, 1])).tolist() == [87, 18]


def test_extended_resources_the_pod_does_not_request_do_not_count() -> None:
    args = {
        "pluginConfig": [
            {
                "name": "NodeResourcesFit",
                "args": {
                    "scoringStrategy": {"resources": [{"name": "nvidia.com/gpu"}, {"name": "cpu"}]}
                },
            }
        ]
    }
    fit = plugin("NodeResourcesFit", args)
    cs, st = state(make_cluster([0, 8]))
    cpu_only = make_pod("a", cpu_m=32_000)
    assert fit.score(cs, cpu_only, st, np.array([0, 1])).tolist() == [50, 50]
    assert is_scalar("nvidia.com/gpu") and is_scalar(GPU_MILLI) and not is_scalar("cpu")


MIB = 1024 * 1024


def test_score_reads_non_zero_defaults_for_a_pod_without_requests() -> None:
    # kube schedutil: 100m cpu and 200 MB for what a pod does not request, in scoring only.
    # cpu (1000 - 100) * 100 // 1000 = 90; memory (1024 - 200) MiB * 100 // 1024 MiB = 80.
    snap = make_cluster([8], cpu_m=1000, mem=GIB)
    fit = plugin("NodeResourcesFit")
    cs, st = state(snap)
    empty = replace(make_pod("a"), requests={})
    assert fit.score(cs, empty, st, np.array([0])).tolist() == [(90 + 80) // 2]
    assert fit.score_node(cs, empty, st, 0) == 85


def test_score_counts_the_defaults_of_pods_already_on_the_node() -> None:
    # n0 holds a pod with no requests (NodeInfo.NonZeroRequested: 100m, 200 MB); the incoming
    # pod asks 100m and 200 MiB. n0: cpu (1000 - 200) -> 80, memory (1024 - 400) -> 60; n1 is
    # empty: 90 and 80.
    idle = BoundPod("idle", "ns", "idle", "n0", 0, {}, 0.0)
    snap = make_cluster([8, 8], cpu_m=1000, mem=GIB, bound_pods=[idle])
    fit = plugin("NodeResourcesFit")
    cs, st = state(snap)
    pod = make_pod("a", cpu_m=100, mem=200 * MIB)
    assert fit.score(cs, pod, st, np.array([0, 1])).tolist() == [70, 85]
    assert [fit.score_node(cs, pod, st, i) for i in (0, 1)] == [70, 85]
    # An assumed pod without requests counts the same way; forgetting it gives it back.
    from gpuplane.scheduler.framework.state import Placement

    st.assume(replace(make_pod("b"), requests={}), Placement(1))
    assert fit.score(cs, pod, st, np.array([0, 1])).tolist() == [70, 70]
    st.forget("b")
    assert fit.score(cs, pod, st, np.array([0, 1])).tolist() == [70, 85]


def test_filter_ignores_the_non_zero_defaults() -> None:
    # A node with no cpu left still takes a pod that requests none (Filter reads real requests).
    snap = make_cluster([8], cpu_m=1000, used_cpu_m=[1000])
    fit = plugin("NodeResourcesFit")
    assert reasons(fit, snap, replace(make_pod("a"), requests={}))[0] == []
