"""twin.kubelet: the kubelet's admission verdict, the GPUs it hands a pod, GPU memory OOM.

The node is the seed's 8-GPU box: GPUs 0-3 on NUMA node 0 and 4-7 on NUMA node 1, each socket
an NVLink square (0-1-3-2 and 4-5-7-6), SYS between the sockets; H100-80GB (81559 MiB).
"""

from __future__ import annotations

from pathlib import Path

from gpuplane.api.pod_phase import PodPhase
from tests.unit.twin.minitwin import bare_pod, pool, run_twin, scenario

SOCKETS = ({0, 1, 2, 3}, {4, 5, 6, 7})
NVLINK_PAIRS = {
    frozenset(p) for p in ((0, 1), (1, 3), (3, 2), (2, 0), (4, 5), (5, 7), (7, 6), (6, 4))
}
GPU_MIB = 81559


def test_single_numa_node_rejects_a_pod_whose_gpus_span_both_sockets(tmp_path: Path) -> None:
    kubelet = {"topologyManagerPolicy": "single-numa-node"}
    twin = run_twin(
        tmp_path,
        scenario(
            pool(kubelet=kubelet),
            workloads=[
                bare_pod("eight", 8, restart="Never"),
                bare_pod("four", 4, restart="Never", at="3s"),
            ],
            control_plane={"kubelet_admission_delay": "2s"},
        ),
        until_s=60.0,
    )
    eight, four = twin.pod("eight"), twin.pod("four")
    # Eight GPUs need both NUMA nodes: the scheduler binds the pod (it does not see NUMA), the
    # kubelet refuses it once its admission delay is over and the pod fails without ever
    # running, freeing the GPUs.
    assert eight.node_name == "gpu-0"
    assert eight.phase is PodPhase.FAILED and eight.reason == "TopologyAffinityError"
    assert eight.started_s is None
    assert [e.t_s for e in twin.events("TopologyAffinityError", "eight")] == [2.0]
    # Four GPUs fit one NUMA node: admitted, and all four come from the same socket.
    assert four.phase is PodPhase.RUNNING and four.started_s == 5.0
    assert any(set(four.gpu_ids) == s for s in SOCKETS)


def test_without_a_topology_manager_the_same_pod_is_admitted(tmp_path: Path) -> None:
    twin = run_twin(
        tmp_path,
        scenario(pool(), workloads=[bare_pod("eight", 8, restart="Never")]),
        until_s=60.0,
    )
    eight = twin.pod("eight")
    assert eight.phase is PodPhase.RUNNING and eight.gpu_ids == tuple(range(8))
    assert twin.events("TopologyAffinityError") == []


def test_gpus_go_to_nvlink_neighbours_and_a_whole_socket_stays_whole(tmp_path: Path) -> None:
    twin = run_twin(
        tmp_path,
        scenario(pool(), workloads=[bare_pod("pair", 2), bare_pod("quad", 4, at="1s")]),
        until_s=60.0,
    )
    pair, quad = twin.pod("pair"), twin.pod("quad")
    # Two GPUs: an NVLink pair, not a PCIe/SYS pair.
    assert frozenset(pair.gpu_ids) in NVLINK_PAIRS
    # Four GPUs after that: the socket the pair left untouched (the other has only two free).
    (pair_socket,) = [s for s in SOCKETS if set(pair.gpu_ids) <= s]
    (other,) = [s for s in SOCKETS if s is not pair_socket]
    assert set(quad.gpu_ids) == other
    assert twin.node("gpu-0").gpu_owner.count(None) == 2


def test_mps_client_over_its_memory_limit_fails_alone(tmp_path: Path) -> None:
    # Two MPS replicas per GPU: each client is pinned to half the GPU's memory, 40779 MiB.
    plugin = {
        "version": "v1",
        "sharing": {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}},
    }
    big = {"gpuplane.io/gpu-memory": "48Gi"}  # 49152 MiB > 40779 MiB
    small = {"gpuplane.io/gpu-memory": "16Gi"}
    twin = run_twin(
        tmp_path,
        scenario(
            pool(device_plugin=plugin),
            workloads=[
                bare_pod("big", 1, restart="Never", annotations=big),
                bare_pod("small", 1, restart="Never", annotations=small),
            ],
        ),
        until_s=60.0,
    )
    big_pod, small_pod = twin.pod("big"), twin.pod("small")
    assert big_pod.phase is PodPhase.FAILED
    assert small_pod.phase is PodPhase.RUNNING
    (oom,) = twin.events("GpuOutOfMemory")
    assert oom.name == "big"
    limit_bytes = GPU_MIB * 1024 * 1024 // 2
    assert f"MPS client limit {limit_bytes} bytes" in oom.message
    assert twin.result.summary.as_dict()["counters"]["gpu_oom_kills"] == 1
