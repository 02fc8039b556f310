"""Every failure explains itself in kube-scheduler's FitError words."""

from __future__ import annotations

import numpy as np
import pytest

from gpuplane.api.taints import Taint
from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.explain import Diagnosis, ReasonGroup, fit_error, go_duration
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.status import Code
from gpuplane.scheduler.framework.types import PodGroupInfo
from tests.unit.scheduler.factories import GPUPLANE, make_cluster, make_pod, make_scheduler

NO_POSTFILTER = ProfileConfig.model_validate(
    {
        "plugins": {
            "postFilter": {"disabled": [{"name": "*"}]},
        }
    }
)


def four_nodes() -> ClusterSnapshot:
    return make_cluster(
        [1, 8, 8, 8],
        taints={1: [Taint("nvidia.com/gpu", "b200", "NoSchedule")]},
        cordoned=[2],
        labels={0: {"zone": "a"}, 3: {"zone": "b"}},
    )


def test_fit_error_counts_each_node_under_its_first_failing_plugin() -> None:
    d = make_scheduler([NO_POSTFILTER]).decide(four_nodes(), [make_pod("x", 2, sel={"zone": "a"})])
    assert d.unschedulable[0].message == (
        "0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's "
        "node affinity/selector, 1 node(s) had untolerated taint {nvidia.com/gpu: b200}, "
        "1 node(s) were unschedulable."
    )


def test_post_filter_messages_follow_like_kube_scheduler() -> None:
    d = make_scheduler().decide(four_nodes(), [make_pod("x", 2, sel={"zone": "a"})])
    # Preemption only tries the node whose rejection was Unschedulable (n0); the Unresolvable
    # ones count as "not helpful". kube's default profile has no Coscheduling, so nothing follows.
    assert d.unschedulable[0].message.endswith(
        "1 node(s) were unschedulable. preemption: 0/4 nodes are available: "
        "1 No preemption victims found for incoming pod, 3 Preemption is not helpful for "
        "scheduling."
    )


def test_gpuplane_profile_adds_coscheduling_reason() -> None:
    d = make_scheduler([GPUPLANE]).decide(four_nodes(), [make_pod("x", 2, sel={"zone": "a"})])
    # Coscheduling's PostFilter adds its own reason for a pod with no group.
    assert d.unschedulable[0].message.endswith(
        "3 Preemption is not helpful for scheduling., can not find pod group"
    )


def test_diagnosis_gives_per_node_per_plugin_reasons() -> None:
    d = make_scheduler().decide(four_nodes(), [make_pod("x", 2, sel={"zone": "a"})])
    diag = d.unschedulable[0].diagnosis
    assert diag is not None
    assert diag.reasons_for("n0") == (("NodeResourcesFit", "Insufficient nvidia.com/gpu"),)
    assert diag.reasons_for("n1") == (
        ("TaintToleration", "node(s) had untolerated taint {nvidia.com/gpu: b200}"),
    )
    assert diag.reasons_for("n2") == (("NodeUnschedulable", "node(s) were unschedulable"),)
    assert diag.reasons_for("n3") == (
        ("NodeAffinity", "node(s) didn't match Pod's node affinity/selector"),
    )
    assert diag.unschedulable_plugins == {
        "NodeResourcesFit",
        "TaintToleration",
        "NodeUnschedulable",
        "NodeAffinity",
    }


def test_every_insufficient_resource_is_a_reason() -> None:
    snap = make_cluster([1, 1], cpu_m=2000)
    d = make_scheduler([NO_POSTFILTER]).decide(snap, [make_pod("x", 2, cpu_m=4000)])
    assert d.unschedulable[0].message == (
        "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient nvidia.com/gpu."
    )


def test_pre_filter_rejection_replaces_the_node_reasons() -> None:
    groups = [PodGroupInfo("ns/g", min_member=4, num_pods=1)]
    snap = make_cluster([8, 8], pod_groups=groups)
    d = make_scheduler([GPUPLANE]).decide(snap, [make_pod("m0", 1, group="g")])
    # PostFilter still runs (kube-scheduler does so after a PreFilter rejection too): every
    # node carries the PreFilter status, which is Unresolvable, so preemption cannot help.
    assert d.unschedulable[0].message == (
        "0/2 nodes are available: pre-filter pod m0 cannot find enough sibling pods, current "
        "pods number: 1, minMember of group: 4. preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling., PodGroup ns/g gets rejected due to Pod m0 "
        "is unschedulable even after PostFilter"
    )


def test_absent_nodes_and_histogram() -> None:
    diag = Diagnosis(
        5,
        tuple(f"n{i}" for i in range(5)),
        (ReasonGroup("P", Code.UNSCHEDULABLE, "Insufficient cpu", np.array([0, 1])),),
        absent=("Q", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "Preemption is not helpful"),
    )
    assert diag.histogram() == {"Insufficient cpu": 2, "Preemption is not helpful": 3}
    assert diag.reasons_for("n4") == (("Q", "Preemption is not helpful"),)
    assert fit_error(3, {"b": 1, "a": 2}) == "0/3 nodes are available: 1 b, 2 a."


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(60, "1m0s"), (10, "10s"), (90, "1m30s"), (3600, "1h0m0s"), (0.5, "500ms"), (0, "0s")],
)
def test_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text
