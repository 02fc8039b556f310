from __future__ import annotations

from typing import Any

import numpy as np

from tests.unit.scheduler.factories import make_cluster, make_pod
from tests.unit.scheduler.plugins.helpers import plugin, state

GFD = {
    0: {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.memory": "81559"},
    1: {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.memory": "40960"},
    2: {},
}


def required(*exprs: dict[str, Any], fields: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    term: dict[str, Any] = {"matchExpressions": list(exprs)}
    if fields:
        term["matchFields"] = fields
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }


def mask(affinity: dict[str, Any] | None = None, sel: dict[str, str] | None = None) -> list[bool]:
    na = plugin("NodeAffinity")
    cs, st = state(make_cluster([8, 8, 8], labels=GFD))
    pod = make_pod("a", sel=sel, affinity=affinity)
    fast = na.filter(cs, pod, st)
    ref = [na.filter_node(cs, pod, st, i).ok for i in range(3)]
    assert fast is None or fast.tolist() == ref
    return ref


def test_node_selector_on_gfd_labels() -> None:
    assert mask(sel={"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}) == [True, False, False]


def test_required_affinity_operators() -> None:
    gt = {"key": "nvidia.com/gpu.memory", "operator": "Gt", "values": ["50000"]}
    assert mask(required(gt)) == [True, False, False]
    not_in = {"key": "nvidia.com/gpu.product", "operator": "NotIn", "values": ["NVIDIA-L4"]}
    assert mask(required(not_in)) == [True, True, True]
    exists = {"key": "nvidia.com/gpu.product", "operator": "Exists"}
    assert mask(required(exists)) == [True, True, False]
    absent = {"key": "nvidia.com/gpu.product", "operator": "DoesNotExist"}
    assert mask(required(absent)) == [False, False, True]
    by_name = [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]
    assert mask(required(fields=by_name)) == [False, True, False]
    empty_terms: dict[str, Any] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
        }
    }
    assert mask(empty_terms) == [False, False, False]


def test_preferred_terms_score_and_normalize() -> None:
    na = plugin("NodeAffinity")
    cs, st = state(make_cluster([8, 8, 8], labels=GFD))
    pref = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 10,
                    "preference": {
                        "matchExpressions": [
                            {"key": "nvidia.com/gpu.product", "operator": "Exists"}
                        ]
                    },
                },
                {
                    "weight": 30,
                    "preference": {
                        "matchExpressions": [
                            {"key": "nvidia.com/gpu.memory", "operator": "Gt", "values": ["50000"]}
                        ]
                    },
                },
            ]
        }
    }
    pod = make_pod("a", affinity=pref)
    nodes = np.array([0, 1, 2])
    assert na.pre_score(cs, pod, st, nodes).ok
    raw = na.score(cs, pod, st, nodes)
    assert raw.tolist() == [40, 10, 0]
    assert na.normalize(raw).tolist() == [100, 25, 0]
    assert not na.pre_score(cs, make_pod("b"), st, nodes).ok  # Skip: no preferred terms
