"""The Fragmentation score plugin (FGD / gpuplane policies inside the framework)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gpuplane.core.errors import InputError
from gpuplane.scheduler.framework.config import ProfileConfig
from tests.unit.scheduler.factories import make_cluster, make_pod, make_scheduler


def profile(policy: str = "fgd", typical: list[dict[str, Any]] | None = None) -> ProfileConfig:
    args: dict[str, Any] = {"policy": policy}
    if typical is not None:
        args["typicalPods"] = typical
    return ProfileConfig.model_validate(
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "score": {
                    "disabled": [{"name": "*"}],
                    "enabled": [{"name": "Fragmentation", "weight": 1}],
                }
            },
            "pluginConfig": [{"name": "Fragmentation", "args": args}],
        }
    )


@pytest.mark.parametrize("policy", ["fgd", "gpuplane"])
def test_one_gpu_pod_takes_the_stranded_gpu(policy: str) -> None:
    # Node 0 has one free GPU (useless to the 2/4/8-GPU typical pods); node 1 is empty.
    matrix = np.array([[0] * 7 + [1000], [1000] * 8])
    snap = make_cluster(gpus=(1, 8), matrix=matrix)
    decision = make_scheduler([profile(policy)]).decide(snap, [make_pod("p", 1)])
    assert [b.node for b in decision.bindings] == [snap.node_names[0]]


def test_share_pod_fills_a_partly_used_gpu() -> None:
    matrix = np.array([[1000] * 7 + [300], [1000] * 8])
    snap = make_cluster(gpus=(7, 8), matrix=matrix)
    typical = [
        {"cpuMilli": 4000, "gpuMilli": 200, "numGpu": 1, "weight": 0.5},
        {"cpuMilli": 8000, "gpuMilli": 1000, "numGpu": 1, "weight": 0.5},
    ]
    decision = make_scheduler([profile("fgd", typical)]).decide(snap, [make_pod("s", milli=200)])
    binding = decision.bindings[0]
    assert binding.node == snap.node_names[0] and binding.gpu_share is not None


def test_bad_args_are_rejected() -> None:
    with pytest.raises((InputError, ValueError)):
        make_scheduler([profile("best", None)])


def test_cached_scores_equal_fresh_scores() -> None:
    # The plugin keeps F and scores between decisions; a fresh plugin must agree everywhere.
    from gpuplane.scheduler.framework.state import ClusterState, CycleState
    from gpuplane.scheduler.plugins.fragmentation import Fragmentation, FragmentationArgs

    # Any: scoring never reaches the framework handle, so the test gives the plugin none.
    no_handle: Any = None
    rng = np.random.default_rng(5)
    kept = Fragmentation(FragmentationArgs(), handle=no_handle)
    for step in range(20):
        matrix = rng.choice([0, 250, 500, 1000], size=(12, 8))
        snap = make_cluster(
            gpus=tuple(int((row == 1000).sum()) for row in matrix),
            matrix=matrix,
            used_cpu_m=list(rng.integers(0, 60_000, 12)),
        )
        st = ClusterState(snap)
        pod = make_pod(f"p{step}", int(rng.integers(1, 3)))
        nodes = np.arange(12, dtype=np.int64)
        fresh = Fragmentation(FragmentationArgs(), handle=no_handle)
        assert list(kept.score(CycleState(), pod, st, nodes)) == list(
            fresh.score(CycleState(), pod, st, nodes)
        )
