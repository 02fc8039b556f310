"""twin.mig: MIG devices as the device plugin advertises them per strategy, and the MIG manager
applying a new ``nvidia.com/mig.config``.

The pool is one DGX H100 (8 x H100-80GB). NVIDIA's ``all-1g.10gb`` puts 7 instances on each
GPU, ``all-3g.40gb`` 2 instances.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuplane.api.pod_phase import PodPhase
from tests.unit.twin.minitwin import MiniTwin, bare_pod, pool, run_twin, scenario

MIG_1G = "nvidia.com/mig-1g.10gb"
MIG_3G = "nvidia.com/mig-3g.40gb"


def mig_twin(tmp_path: Path, strategy: str, *, until_s: float = 30.0, **extra: Any) -> MiniTwin:
    mig = {"strategy": strategy, "config": "all-1g.10gb", "reconfigure_seconds": 60}
    resource = "nvidia.com/gpu" if strategy == "single" else MIG_1G
    workloads = [bare_pod("small", extra_limits={resource: 1})]
    return run_twin(
        tmp_path,
        scenario(pool("mig", "dgx-h100", mig=mig), workloads=workloads, **extra),
        until_s=until_s,
    )


def test_mixed_strategy_advertises_each_profile_under_its_own_name(tmp_path: Path) -> None:
    twin = mig_twin(tmp_path, "mixed")
    assert twin.advertised("mig-0", MIG_1G) == 8 * 7
    assert twin.advertised("mig-0", "nvidia.com/gpu") == 0
    small = twin.pod("small")
    assert small.phase is PodPhase.RUNNING
    assert list(small.ext_device_ids) == [MIG_1G] and len(small.ext_device_ids[MIG_1G]) == 1


def test_single_strategy_advertises_the_instances_as_nvidia_com_gpu(tmp_path: Path) -> None:
    twin = mig_twin(tmp_path, "single")
    assert twin.advertised("mig-0", "nvidia.com/gpu") == 8 * 7
    assert not any(name.startswith("nvidia.com/mig-") for name in twin.node("mig-0").allocatable)
    small = twin.pod("small")
    assert small.phase is PodPhase.RUNNING and len(small.gpu_ids) == 1


def change_at_100s(tmp_path: Path, until_s: float) -> MiniTwin:
    change = {"at": "100s", "pool": "mig", "config": "all-3g.40gb"}
    return mig_twin(tmp_path, "mixed", until_s=until_s, mig_config_changes=[change])


def test_the_manager_holds_the_node_pending_while_it_reconfigures(tmp_path: Path) -> None:
    twin = change_at_100s(tmp_path, until_s=130.0)
    node = twin.node("mig-0")
    assert node.labels["nvidia.com/mig.config"] == "all-3g.40gb"
    assert node.labels["nvidia.com/mig.config.state"] == "pending"
    assert node.unschedulable
    # No MIG device is advertised while the GPUs are repartitioned; the pod on one was evicted.
    assert twin.advertised("mig-0", MIG_1G) == 0 and twin.advertised("mig-0", MIG_3G) == 0
    (evicted,) = twin.events("Evicted")
    assert evicted.name == "small" and evicted.t_s == 100.0
    assert twin.events("MigConfigApplied") == []


def test_the_manager_advertises_the_new_layout_when_done(tmp_path: Path) -> None:
    twin = change_at_100s(tmp_path, until_s=200.0)
    node = twin.node("mig-0")
    assert node.labels["nvidia.com/mig.config.state"] == "success"
    assert not node.unschedulable
    assert twin.advertised("mig-0", MIG_3G) == 8 * 2
    assert twin.advertised("mig-0", MIG_1G) == 0
    (applied,) = twin.events("MigConfigApplied", "mig-0")
    assert applied.t_s == 160.0 and "all-3g.40gb" in applied.message
