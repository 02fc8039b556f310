"""The bind-time allocation value: the CPUs the kubelet holds follow its verdict at binding."""

from __future__ import annotations

from gpuplane.kubelet.admission import AdmitResult, ContainerAllocation
from gpuplane.twin.kubelet.bind_allocation import BindAllocation

ADMITTED = AdmitResult(
    True,
    allocations={
        "init": ContainerAllocation((0,), cpus=(5, 3)),
        "main": ContainerAllocation((0,), cpus=(3, 4), gpus=(1, 0)),
    },
)


def test_the_cpu_hold_is_every_container_cpu_of_an_admitting_verdict() -> None:
    alloc = BindAllocation("n0", gpu_ids=(0, 1), admission=ADMITTED)
    assert alloc.cpu_hold == (3, 4, 5)
    assert alloc.admission is not None and alloc.admission.gpus == (0, 1)


def test_no_hold_without_a_verdict_or_when_the_kubelet_refuses() -> None:
    assert BindAllocation("n0").cpu_hold == ()
    refused = AdmitResult(False, "TopologyAffinityError", "no", dict(ADMITTED.allocations))
    assert BindAllocation("n0", admission=refused).cpu_hold == ()
