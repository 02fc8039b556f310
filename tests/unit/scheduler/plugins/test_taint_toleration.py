from __future__ import annotations

import numpy as np

from gpuplane.api.taints import Taint, Toleration
from tests.unit.scheduler.factories import make_cluster, make_pod
from tests.unit.scheduler.plugins.helpers import plugin, state

B200 = Taint("nvidia.com/gpu", "b200", "NoSchedule")
SPOT = Taint("spot", "true", "PreferNoSchedule")


def test_filter_names_the_first_untolerated_taint() -> None:
    snap = make_cluster([8, 8, 8], taints={0: [SPOT, B200], 1: [SPOT]})
    tt = plugin("TaintToleration")
    cs, st = state(snap)
    pod = make_pod("a")
    assert tt.filter(cs, pod, st).tolist() == [False, True, True]
    assert tt.filter_node(cs, pod, st, 0).reasons == (
        "node(s) had untolerated taint {nvidia.com/gpu: b200}",
    )
    groups = tt.filter_reasons(cs, pod, st, np.array([0]))
    assert [g.reason for g in groups] == ["node(s) had untolerated taint {nvidia.com/gpu: b200}"]
    tolerant = make_pod("b", tol=(Toleration("nvidia.com/gpu", "Exists"),))
    assert tt.filter(cs, tolerant, st).all()


def test_prefer_no_schedule_score_is_reversed() -> None:
    snap = make_cluster(
        [8, 8, 8], taints={0: [SPOT], 1: [SPOT, Taint("x", "", "PreferNoSchedule")]}
    )
    tt = plugin("TaintToleration")
    cs, st = state(snap)
    nodes = np.array([0, 1, 2])
    pod = make_pod("a")
    raw = tt.score(cs, pod, st, nodes)
    assert raw.tolist() == [1, 2, 0]
    assert tt.normalize(raw).tolist() == [50, 0, 100]
    assert tt.normalize_reference(raw.tolist()) == [50, 0, 100]
    spot_ok = make_pod("b", tol=(Toleration("spot", "Equal", "true", "PreferNoSchedule"),))
    assert tt.score(cs, spot_ok, st, nodes).tolist() == [0, 1, 0]
    assert tt.normalize(np.zeros(3, dtype=np.int64)).tolist() == [100, 100, 100]
