from __future__ import annotations

from typing import Any

import numpy as np

from gpuplane.scheduler.framework.decision import SchedulingDecision
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


# ----- PreFilter: nodes named by matchFields metadata.name (kube's PreFilterResult.NodeNames) -----


def pinned(*names_per_term: list[str]) -> dict[str, Any]:
    """A DaemonSet-style affinity: one term per list, each ``metadata.name In`` those names."""
    terms = [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": names}]}
        for names in names_per_term
    ]
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    }


NO_POST_FILTER = {"plugins": {"postFilter": {"disabled": [{"name": "*"}]}}}


def decide(
    pod_affinity: dict[str, Any], gpus: list[int], profile: dict[str, Any] | None = None
) -> SchedulingDecision:
    """The fast and the per-node reference framework, which must agree."""
    from gpuplane.scheduler.framework.config import ProfileConfig
    from tests.unit.scheduler.factories import make_scheduler

    cfgs = [ProfileConfig.model_validate(profile)] if profile else []
    pod = make_pod("ds", 2, affinity=pod_affinity)
    fast = make_scheduler(cfgs).decide(make_cluster(gpus), [pod])
    ref = make_scheduler(cfgs, reference=True).decide(make_cluster(gpus), [pod])
    assert fast.bindings == ref.bindings
    assert [u.message for u in fast.unschedulable] == [u.message for u in ref.unschedulable]
    return fast


def test_required_node_names_unite_terms_and_intersect_requirements() -> None:
    from gpuplane.scheduler.framework.matching import required_node_names

    assert required_node_names(pinned(["n0", "n1"], ["n2"])) == {"n0", "n1", "n2"}
    both = {"key": "metadata.name", "operator": "In"}
    term = {"matchFields": [{**both, "values": ["n0", "n1"]}, {**both, "values": ["n1", "n2"]}]}
    aff = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }
    assert required_node_names(aff) == {"n1"}
    # A term naming no node leaves every node a candidate (the terms are ORed).
    assert required_node_names(required({"key": "zone", "operator": "Exists"})) is None
    assert required_node_names(None) is None


def test_nodes_left_out_by_pre_filter_are_not_in_the_fit_error() -> None:
    # Pinned to n1, which has no free GPU: only n1 is filtered; "0/3" still counts every node.
    d = decide(pinned(["n1"]), [8, 0, 8], NO_POST_FILTER)
    assert d.unschedulable[0].message == "0/3 nodes are available: 1 Insufficient nvidia.com/gpu."
    diag = d.unschedulable[0].diagnosis
    assert diag is not None and diag.reasons_for("n0") == ()


def test_preemption_counts_the_left_out_nodes_as_not_helpful() -> None:
    d = decide(pinned(["n1"]), [8, 0, 8])
    assert d.unschedulable[0].message == (
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are "
        "available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful "
        "for scheduling."
    )


def test_a_pinned_pod_binds_to_its_node() -> None:
    d = decide(pinned(["n2"]), [8, 8, 8])
    assert [b.node for b in d.bindings] == ["n2"]


def test_conflicting_terms_are_rejected_at_pre_filter() -> None:
    both = {"key": "metadata.name", "operator": "In"}
    term = {"matchFields": [{**both, "values": ["n0"]}, {**both, "values": ["n1"]}]}
    aff = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }
    d = decide(aff, [8, 8, 8], NO_POST_FILTER)
    assert d.unschedulable[0].message == "0/3 nodes are available: pod affinity terms conflict."


def test_names_the_cluster_lacks_are_dropped() -> None:
    d = decide(pinned(["gone", "n0"]), [0, 8, 8], NO_POST_FILTER)
    assert d.unschedulable[0].message == "0/3 nodes are available: 1 Insufficient nvidia.com/gpu."
    d = decide(pinned(["gone"]), [8, 8, 8], NO_POST_FILTER)
    assert d.unschedulable[0].message == "0/3 nodes are available:"
