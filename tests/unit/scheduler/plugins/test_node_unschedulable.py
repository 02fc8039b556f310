from __future__ import annotations

from gpuplane.api.taints import Toleration
from tests.unit.scheduler.factories import make_cluster, make_pod
from tests.unit.scheduler.plugins.helpers import plugin, state


def test_cordoned_nodes_take_only_tolerating_pods() -> None:
    nu = plugin("NodeUnschedulable")
    cs, st = state(make_cluster([8, 8], cordoned=[1]))
    pod = make_pod("a")
    assert nu.filter(cs, pod, st).tolist() == [True, False]
    assert nu.filter_node(cs, pod, st, 1).reasons == ("node(s) were unschedulable",)
    tol = (Toleration("node.kubernetes.io/unschedulable", "Exists", None, "NoSchedule"),)
    assert nu.filter(cs, make_pod("b", tol=tol), st) is None
