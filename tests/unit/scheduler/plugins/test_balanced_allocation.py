"""NodeResourcesBalancedAllocation: scores hand-computed from balanced_allocation.go's formula."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from gpuplane.scheduler.plugins.noderesources.balanced_allocation import balanced_score
from tests.unit.scheduler.factories import GIB, make_cluster, make_pod
from tests.unit.scheduler.plugins.helpers import plugin, state


def scores(
    args: dict[str, Any] | None, snap_kw: dict[str, Any], pod_kw: dict[str, Any]
) -> list[int]:
    ba = plugin("NodeResourcesBalancedAllocation", args)
    snap = make_cluster(**snap_kw)
    cs, st = state(snap)
    pod = make_pod("p", **pod_kw)
    nodes = np.arange(st.num_nodes)
    fast: list[int] = ba.score(cs, pod, st, nodes).tolist()
    assert fast == [ba.score_node(cs, pod, st, i) for i in range(st.num_nodes)]
    return fast


def test_two_resources_score_one_minus_half_the_difference() -> None:
    # Nodes: 4000m cpu, 8 GiB; cpu in use 0 / 3000m; the pod asks 1000m and 3 GiB.
    # n0: cpu 0.25, memory 0.375 -> std 0.0625 -> 93.75 -> 93
    # n1: cpu 1.0, memory 0.375 -> std 0.3125 -> 68.75 -> 68
    got = scores(
        None,
        {"gpus": [8, 8], "cpu_m": 4000, "mem": 8 * GIB, "used_cpu_m": [0, 3000]},
        {"cpu_m": 1000, "mem": 3 * GIB},
    )
    assert got == [93, 68]


def test_fractions_are_capped_at_one() -> None:
    # cpu (2000 + 4000) / 4000 -> 1, memory 4 / 8 -> 0.5: std 0.25 -> 75.
    got = scores(
        None,
        {"gpus": [8], "cpu_m": 4000, "mem": 8 * GIB, "used_cpu_m": [2000]},
        {"cpu_m": 4000, "mem": 4 * GIB},
    )
    assert got == [75]


def test_three_resources_use_the_population_std() -> None:
    # cpu 1000/4000 = 0.25, memory 3/8 = 0.375, gpu 2/8 = 0.25: mean 0.29167, std 0.058926
    # -> 94.1 -> 94. A node without GPUs (allocatable 0) scores cpu and memory only: 93.
    args = {
        "pluginConfig": [
            {
                "name": "NodeResourcesBalancedAllocation",
                "args": {
                    "resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "nvidia.com/gpu"}]
                },
            }
        ]
    }
    matrix = np.full((2, 8), 1000, dtype=np.int64)
    matrix[1, :] = -1  # n1 has no GPUs
    got = scores(
        args,
        {"gpus": [8, 0], "cpu_m": 4000, "mem": 8 * GIB, "matrix": matrix},
        {"gpus": 2, "cpu_m": 1000, "mem": 3 * GIB},
    )
    assert got == [94, 93]


def test_an_extended_resource_the_pod_does_not_request_is_left_out() -> None:
    args = {
        "pluginConfig": [
            {
                "name": "NodeResourcesBalancedAllocation",
                "args": {"resources": [{"name": "cpu"}, {"name": "nvidia.com/gpu"}]},
            }
        ]
    }
    # Only cpu counts: one fraction, std 0 -> 100.
    assert scores(args, {"gpus": [8], "cpu_m": 4000}, {"cpu_m": 1000}) == [100]


def test_requests_are_read_as_written_without_non_zero_defaults() -> None:
    # upstream builds this plugin with useRequested: a pod without requests adds nothing.
    # cpu 1000/4000 = 0.25, memory 0 -> std 0.125 -> 87.
    ba = plugin("NodeResourcesBalancedAllocation")
    cs, st = state(make_cluster([8], cpu_m=4000, mem=8 * GIB, used_cpu_m=[1000]))
    empty = replace(make_pod("p"), requests={})
    assert ba.score(cs, empty, st, np.array([0])).tolist() == [87]
    assert ba.score_node(cs, empty, st, 0) == 87


@pytest.mark.parametrize(
    ("fractions", "expected"),
    [([], 100), ([0.7], 100), ([0.2, 0.8], 70), ([0.0, 0.0, 0.6], 71)],
)
def test_balanced_score(fractions: list[float], expected: int) -> None:
    # [0, 0, 0.6]: mean 0.2, std sqrt((0.04 + 0.04 + 0.16) / 3) = 0.28284 -> 71.7 -> 71
    assert balanced_score(fractions) == expected


def test_in_the_default_profile_with_weight_one() -> None:
    from gpuplane.scheduler.framework.config import ProfileConfig
    from gpuplane.scheduler.framework.plugin_sets import resolve_profile
    from gpuplane.scheduler.plugins.registry import in_tree_registry

    resolved = resolve_profile(ProfileConfig(), in_tree_registry())
    assert ("NodeResourcesBalancedAllocation", 1) in [
        (p.name, p.weight) for p in resolved.points["score"]
    ]
