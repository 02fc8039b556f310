from __future__ import annotations

import numpy as np

from gpuplane.scheduler.policies import PolicyContext, make_policy
from gpuplane.scheduler.policies.fgd import fgd_scores
from gpuplane.scheduler.policies.gpuplane import (
    GpuplanePolicy,
    GpuplaneSettings,
    cpu_per_gpu_milli,
    cpu_pressure,
    gpuplane_scores,
    relief_weight_for,
    stranded,
)
from tests.unit.scheduler.openb_factories import all_nodes, make_nodes, make_pod, make_typical

# Share pods of 500 milli with 4 cores (p .5), whole GPUs with 8 cores (p .25), CPU-only (.25):
# r = (.5 * 4000 + .25 * 8000) / (.5 * 500 + .25 * 1000) = 8 milli-CPU per GPU milli.
TYPICAL = make_typical([(4000, 500, 1), (8000, 1000, 1), (2000, 0, 0)], [0.5, 0.25, 0.25])


def test_ratio_and_stranding_by_hand() -> None:
    assert cpu_per_gpu_milli(TYPICAL) == 8.0
    got = stranded(np.array([8000, 64_000, 0]), np.array([[1000, 1000], [1000, 1000], [0, 0]]), 8.0)
    assert got.tolist() == [1000.0, 0.0, 0.0]
    assert cpu_per_gpu_milli(make_typical([(2000, 0, 0)], [1.0])) is None


def test_cpu_pressure_and_relief_ramp() -> None:
    # CPU per GPU milli of all typical pods: (2000 + 2000 + 500) / 500 = 9.
    assert cpu_pressure(TYPICAL, cluster_cpu_milli=9_000, cluster_gpus=1) == 1.0
    assert relief_weight_for(TYPICAL, 9_000, 1) == 1.0
    assert relief_weight_for(TYPICAL, 10_000, 1) == 0.0  # pressure 0.9
    assert abs(relief_weight_for(TYPICAL, 9_474, 1) - 0.5) < 0.01  # pressure ~0.95
    assert relief_weight_for(TYPICAL, 0, 0) == 0.0  # capacity unknown: no credit


def test_cpu_only_pod_avoids_stranding_gpus_where_fgd_ties() -> None:
    # Node 0 CPU-rich, node 1 has exactly the CPU its two GPUs need (16 cores at r = 8).
    nodes = make_nodes([[1000, 1000], [1000, 1000]], cpu=[64_000, 16_000])
    pod = make_pod(cpu=8000)
    assert fgd_scores(nodes, pod, all_nodes(2), TYPICAL).score.tolist() == [50, 50]
    # Node 1 would strand 1000 milli: int(100 sigmoid(-1)) = 26.
    assert gpuplane_scores(nodes, pod, all_nodes(2), TYPICAL).score.tolist() == [50, 26]


def test_relief_is_credited_only_when_asked() -> None:
    # A CPU-poor node (8 cores for 2 GPUs: S = 1000) and a CPU-rich one.
    nodes = make_nodes([[1000, 1000], [1000, 1000]], cpu=[8_000, 64_000])
    pod = make_pod(cpu=1000, gpus=1, milli=1000)
    plain = gpuplane_scores(nodes, pod, all_nodes(2), TYPICAL)
    assert plain.score.tolist() == fgd_scores(nodes, pod, all_nodes(2), TYPICAL).score.tolist()
    credited = gpuplane_scores(
        nodes, pod, all_nodes(2), TYPICAL, GpuplaneSettings(relief_weight=1.0)
    )
    # After: 1000 GPU milli, 7 cores -> S = 125; the credit is 875 milli of F.
    assert credited.score[0] > plain.score[0]
    assert credited.score[1] == plain.score[1]


def test_share_gpu_choice_and_factory() -> None:
    nodes = make_nodes([[0, 700, 1000, 700]], cpu=[64_000])
    pod = make_pod(cpu=1000, gpus=1, milli=300)
    scores = gpuplane_scores(nodes, pod, all_nodes(1), TYPICAL)
    # As FGD: taking the free GPU would leave no whole GPU for the 1-GPU typical pod.
    assert scores.gpu.tolist() == [1] == fgd_scores(nodes, pod, all_nodes(1), TYPICAL).gpu.tolist()
    policy = make_policy(
        "gpuplane", PolicyContext(typical=TYPICAL, cluster_cpu_milli=9_000, cluster_gpus=1)
    )
    assert isinstance(policy, GpuplanePolicy) and policy.settings.relief_weight == 1.0
    assert policy.needs_frag and policy.node_local
