from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.topology.collective import best_ring, best_ring_bruteforce, ring_allreduce_cost
from tests.factories import all_pairs, make_topology

DGX1 = [
    row.split()
    for row in """\
X NV1 NV1 NV2 NV2 SYS SYS SYS
NV1 X NV2 NV1 SYS NV2 SYS SYS
NV1 NV2 X NV2 SYS SYS NV1 SYS
NV2 NV1 NV2 X SYS SYS SYS NV1
NV2 SYS SYS SYS X NV1 NV1 NV2
SYS NV2 SYS SYS NV1 X NV2 NV1
SYS SYS NV1 SYS NV1 NV2 X NV2
SYS SYS SYS NV1 NV2 NV1 NV2 X""".splitlines()
]


def test_nvswitch_ring_is_full_nvlink_speed() -> None:
    topo = make_topology(all_pairs(8, "NV18"))
    ring = best_ring(topo, range(8))
    assert ring.bottleneck_gbps == 450.0 and ring.exact


def test_dgx1_has_an_all_nv2_ring_over_eight_gpus() -> None:
    topo = make_topology(DGX1, model="V100-SXM2-16GB")
    ring = best_ring(topo, range(8))
    assert ring.bottleneck_gbps == 50.0
    for a, b in zip(ring.order, ring.order[1:] + ring.order[:1], strict=True):
        assert topo.gpu_link(a, b).label == "NV2"


def test_cross_socket_pair_is_bounded_by_sys() -> None:
    topo = make_topology(DGX1, model="V100-SXM2-16GB")
    assert best_ring(topo, [0, 5]).bottleneck_gbps == topo.gpu_bandwidth_gbps(0, 5)


@st.composite
def random_matrix(draw: st.DrawFn) -> list[list[str]]:
    n = draw(st.integers(min_value=3, max_value=7))
    labels = [["X"] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            labels[i][j] = labels[j][i] = draw(
                st.sampled_from(["NV1", "NV2", "NV4", "PIX", "NODE", "SYS"])
            )
    return labels


@settings(max_examples=60, deadline=None)
@given(random_matrix(), st.data())
def test_exact_ring_matches_bruteforce(labels: list[list[str]], data: st.DataObject) -> None:
    topo = make_topology(labels, model="V100-SXM2-16GB")
    n = len(labels)
    gpus = data.draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=n, unique=True))
    fast, ref = best_ring(topo, gpus), best_ring_bruteforce(topo, gpus)
    assert fast.bottleneck_gbps == ref.bottleneck_gbps
    assert sorted(fast.order) == sorted(gpus)


def test_allreduce_cost_formula() -> None:
    ring = best_ring(make_topology(all_pairs(4, "NV18")), range(4))
    cost = ring_allreduce_cost(ring, 4 * 10**9, hop_latency_s=0.0)
    # 2(n-1)/n * S / B = 1.5 * 4e9 / 450e9
    assert cost.time_s == pytest.approx(1.5 * 4e9 / 450e9)
    assert cost.busbw_gbps == pytest.approx(450.0)
    assert ring_allreduce_cost(best_ring(make_topology(all_pairs(2, "NV18")), [0]), 100).time_s == 0


def test_bad_sets_rejected() -> None:
    topo = make_topology(all_pairs(4, "NV18"))
    with pytest.raises(ValueError):
        best_ring(topo, [0, 0, 1])
    with pytest.raises(ValueError):
        best_ring(topo, [0, 9])
