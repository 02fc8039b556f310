"""twin.scheduling: the scheduling loop binds what fits and leaves the rest Pending with the
scheduler's FitError message, as ``kubectl describe pod`` shows it."""

from __future__ import annotations

from pathlib import Path

from gpuplane.api.pod_phase import PodPhase
from tests.unit.twin.minitwin import bare_pod, pool, run_twin, scenario


def test_the_loop_binds_a_pod_and_charges_its_node(tmp_path: Path) -> None:
    twin = run_twin(
        tmp_path,
        scenario(pool(count=2), workloads=[bare_pod("a", 3, cpu="4", memory="16Gi")]),
        until_s=30.0,
    )
    a = twin.pod("a")
    assert a.phase is PodPhase.RUNNING and a.scheduled_s == 0.0
    assert a.conditions["PodScheduled"] is True
    # Both nodes are empty and equal: the tie goes to the first.
    assert a.node_name == "gpu-0"
    (bound,) = twin.events("Scheduled", "a")
    assert bound.message.startswith("Successfully assigned default/a to gpu-0")
    node = twin.node("gpu-0")
    assert node.requested["nvidia.com/gpu"] == 3
    assert node.requested["cpu"] == 4000 and node.requested["memory"] == 16 * 1024**3
    assert sum(o is not None for o in node.gpu_owner) == 3
    assert twin.node("gpu-1").requested.get("nvidia.com/gpu", 0) == 0


def test_a_pod_that_fits_nowhere_stays_pending_with_the_fit_error(tmp_path: Path) -> None:
    twin = run_twin(
        tmp_path,
        scenario(
            pool(count=2),
            workloads=[bare_pod("a", 6), bare_pod("b", 6), bare_pod("big", 4, at="1s")],
        ),
        until_s=400.0,
    )
    assert {twin.pod("a").node_name, twin.pod("b").node_name} == {"gpu-0", "gpu-1"}
    big = twin.pod("big")
    # Two GPUs are left on each node; four fit on neither, and nothing is lower priority.
    assert big.phase is PodPhase.PENDING and big.node_name is None
    assert big.conditions["PodScheduled"] is False
    assert big.last_schedule_message is not None
    fit_error, preemption = big.last_schedule_message.split(" preemption: ", 1)
    assert fit_error == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    assert preemption.startswith("0/2 nodes are available: 2 No preemption victims found")
    # Nothing in the cluster changes, so no event moves the pod out of unschedulablePods: it is
    # tried again only when the 5-minute flush (checked every 30 s from the failure) moves it.
    # The second failure says the same, so it adds no second FailedScheduling event.
    assert big.schedule_attempts == 2
    assert [e.t_s for e in twin.events("FailedScheduling", "big")] == [1.0]
