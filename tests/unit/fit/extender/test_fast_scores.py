"""``score_names`` (numpy, once per node state) agrees with ``decide.prioritize`` (the
reference), and its encoding is the protocol's bare HostPriorityList."""

from __future__ import annotations

import json

import pytest

from gpuplane.fit.extender.decide import prioritize, top_host
from gpuplane.fit.extender.fast_scores import score_names
from gpuplane.fit.extender.needs import GpuNeeds
from gpuplane.fit.extender.settings import ExtenderSettings
from gpuplane.fit.extender.view import make_view
from gpuplane.fit.model import FitCluster
from gpuplane.live.extender.wire import priority_json, priority_list
from tests.unit.fit.extender.test_decide import _pcie
from tests.unit.fit.fit_factories import SNC, bound, cluster, h100, info


def _cluster() -> FitCluster:
    nodes = [h100(f"n{i}", kubelet=SNC if i % 2 else None) for i in range(12)]
    nodes += [_pcie("pcie-0"), _pcie("pcie-1")]
    pods = (
        bound("a", "n1", 6, ids=(0, 1, 2, 4, 5, 6)),
        bound("b", "n2", 4),
        bound("c", "n3", 8),
        bound("d", "pcie-1", 2),
    )
    return cluster(*nodes, pods=pods)


@pytest.mark.parametrize("gpus", [0, 1, 2, 4, 8])
@pytest.mark.parametrize("weight", [0.0, 0.3, 1.0])
def test_agrees_with_the_reference(gpus: int, weight: float) -> None:
    view = make_view(_cluster())
    names = [*reversed(list(view.nodes)), "ghost"]  # an unknown name too
    pod = info("p", gpus, guaranteed=True)
    settings = ExtenderSettings(packing_weight=weight)
    ref = prioritize(view, pod, GpuNeeds(), names, settings)
    fast = score_names(view, pod, GpuNeeds(), names, settings, {})
    assert fast.host_scores() == ref
    assert fast.top() == top_host(ref)
    assert json.loads(priority_json(fast)) == priority_list(ref)


def test_nothing_offered() -> None:
    view = make_view(_cluster())
    scores = score_names(view, info("p", 2), GpuNeeds(), [], ExtenderSettings())
    assert scores.top() is None and priority_json(scores) == b"[]"


def test_names_are_json_escaped() -> None:
    view = make_view(cluster(h100('we"ird\\name')))
    scores = score_names(view, info("p", 1), GpuNeeds(), ['we"ird\\name'], ExtenderSettings())
    assert json.loads(priority_json(scores)) == [{"Host": 'we"ird\\name', "Score": 1}]
