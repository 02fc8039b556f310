from __future__ import annotations

import itertools

import pytest

from gpuplane.api.pod_phase import PodPhase
from gpuplane.api.qos import QosClass
from gpuplane.fit.workload_objects import PodTemplate
from gpuplane.twin.cluster.objects import VALID_POD_TRANSITIONS, IllegalTransition, Pod


def make_pod(phase: PodPhase) -> Pod:
    pod = Pod(
        uid="u",
        name="p",
        namespace="ns",
        template=PodTemplate(),
        requests={},
        qos=QosClass.BEST_EFFORT,
        created_s=0.0,
    )
    pod.phase = phase
    return pod


@pytest.mark.parametrize(("src", "dst"), list(itertools.product(PodPhase, PodPhase)))
def test_every_pod_transition_is_allowed_or_refused(src: PodPhase, dst: PodPhase) -> None:
    pod = make_pod(src)
    if src is dst or dst in VALID_POD_TRANSITIONS[src]:
        pod.set_phase(dst)
        assert pod.phase is dst
    else:
        with pytest.raises(IllegalTransition):
            pod.set_phase(dst)
        assert pod.phase is src


def test_terminal_phases_are_final() -> None:
    assert not VALID_POD_TRANSITIONS[PodPhase.SUCCEEDED]
    assert not VALID_POD_TRANSITIONS[PodPhase.FAILED]
