from __future__ import annotations

import numpy as np
import pytest

from gpuplane.scheduler.openb.trace import load_nodes, load_pods
from gpuplane.scheduler.openb.typical import typical_pods
from gpuplane.scheduler.policies.fgd import fgd_scores, sigmoid_score
from gpuplane.scheduler.policies.frag import frag_of_nodes, node_frag
from gpuplane.scheduler.policies.reference import frag_reference
from tests.unit.scheduler.openb_factories import (
    DATA,
    NODE_CSV,
    all_nodes,
    make_nodes,
    make_pod,
    make_pod_table,
    make_typical,
)


def test_typical_pods_order_cut_and_renormalisation() -> None:
    # Counts: A x4, B x3, C x2 (tie with D, larger cpu first), D x2, E x1 = 12 pods.
    specs = [(1000, 1, 500)] * 4 + [(2000, 0, 0)] * 3 + [(3000, 1, 1000)] * 2
    specs += [(500, 1, 1000)] * 2 + [(100, 2, 1000)]
    typical = typical_pods(make_pod_table(specs), ("G2",), threshold_pct=75)
    # 75 % of 12 = 9 pods: A, B, C cover 4 + 3 + 2 = 9.
    assert typical.cpu_milli.tolist() == [1000, 2000, 3000]
    assert typical.gpu_milli.tolist() == [500, 0, 1000]
    assert typical.prob.tolist() == [(c / 12) / (9 / 12) for c in (4, 3, 2)]
    assert abs(typical.prob.sum() - 1.0) < 1e-12


def test_default_trace_typical_pods() -> None:
    nodes = load_nodes(NODE_CSV)
    typical = typical_pods(load_pods(DATA / "openb_pod_list_default.csv"), nodes.model_names)
    assert typical.num_specs == 35
    assert (typical.cpu_milli[0], typical.gpu_milli[0], typical.num_gpu[0]) == (3152, 810, 1)
    assert round(float(typical.prob[0]), 3) == 0.135


def test_fragmentation_by_hand() -> None:
    # Typical: share 500 (p .5), one whole GPU with 8 cores (p .25), CPU-only (p .25).
    typical = make_typical([(1000, 500, 1), (8000, 1000, 1), (1000, 0, 0)], [0.5, 0.25, 0.25])
    # Node: GPUs free 1000, 300, 0; 4 cores left.
    frag = node_frag(np.array([4000]), np.array([[1000, 300, 0]]), np.array([0]), typical)
    # share pod fits (cpu ok, a GPU >= 500): fragment = the 300 GPU -> .5 * 300
    # whole-GPU pod: GPU fits, 4 < 8 cores -> lack CPU -> all 1300 free -> .25 * 1300
    # CPU-only pod: all free GPU is fragment -> .25 * 1300
    assert frag[0] == pytest.approx(0.5 * 300 + 0.25 * 1300 + 0.25 * 1300)
    assert frag[0] == frag_reference(4000, [1000, 300, 0], 0, typical)


def test_no_access_counts_everything() -> None:
    typical = make_typical([(0, 500, 1)], [1.0], num_models=2, access=[[True, False]])
    frag = node_frag(
        np.array([1000, 1000]), np.array([[1000, 200], [1000, 200]]), np.array([0, 1]), typical
    )
    assert frag.tolist() == [200.0, 1200.0]


def test_fast_frag_equals_reference_on_the_cluster() -> None:
    nodes = load_nodes(NODE_CSV)
    typical = typical_pods(load_pods(DATA / "openb_pod_list_gpuspec33.csv"), nodes.model_names)
    rng = np.random.default_rng(1)
    gpu_left = np.zeros((200, 8), dtype=np.int64)
    counts = nodes.num_gpus[:200]
    for i, count in enumerate(counts):
        gpu_left[i, :count] = rng.choice([0, 30, 190, 500, 1000], size=count)
    cpu = rng.integers(0, 64_000, 200)
    model = nodes.model[:200]
    fast = frag_of_nodes(cpu, gpu_left, model, typical, chunk=64)
    slow = [
        frag_reference(int(c), g.tolist(), int(m), typical)
        for c, g, m in zip(cpu, gpu_left, model, strict=True)
    ]
    assert fast.tolist() == slow  # bit for bit


def test_sigmoid_score_truncates() -> None:
    assert sigmoid_score(np.array([0.0, -1e-9, 1000.0, -1e6])).tolist() == [50, 49, 73, 0]


def test_cpu_only_pod_that_changes_no_class_scores_exactly_50() -> None:
    typical = make_typical([(1000, 500, 1)], [1.0])
    nodes = make_nodes([[1000, 300], [500]], cpu=[64_000, 32_000])
    scores = fgd_scores(nodes, make_pod(cpu=2000), all_nodes(2), typical)
    assert scores.score.tolist() == [50, 50]


def test_fgd_share_gpu_is_lowest_index_with_best_integer_score() -> None:
    typical = make_typical([(1000, 500, 1), (1000, 200, 1)], [0.5, 0.5])
    # 300 milli into a 700 GPU leaves 400 (a fragment for the 500 pod): 45; into the free
    # GPU leaves 700: F unchanged, 50. The two 700 GPUs are one candidate.
    nodes = make_nodes([[0, 700, 1000, 700], [1000, 980, 0]])
    scores = fgd_scores(nodes, make_pod(gpus=1, milli=300), all_nodes(2), typical)
    assert scores.score.tolist() == [50, 50]
    assert scores.gpu[0] == 2
    # Both GPUs of node 1 keep F unchanged for a 20-milli pod: the lowest index wins, not the
    # tighter GPU (GPUs compare on the truncated score).
    tiny = fgd_scores(nodes, make_pod(gpus=1, milli=20), all_nodes(2), typical)
    assert tiny.gpu.tolist() == [1, 0]
