"""The enums' string forms are Kubernetes' and the device plugin's, letter for letter."""

from __future__ import annotations

from gpuplane.api.pod_phase import TERMINAL_PHASES, PodPhase
from gpuplane.api.qos import QosClass
from gpuplane.api.strategies import MigStrategy, SharingStrategy


def test_string_forms() -> None:
    assert [p.value for p in PodPhase] == ["Pending", "Running", "Succeeded", "Failed", "Unknown"]
    assert [q.value for q in QosClass] == ["Guaranteed", "Burstable", "BestEffort"]
    assert [m.value for m in MigStrategy] == ["none", "single", "mixed"]
    assert [s.value for s in SharingStrategy] == ["none", "time-slicing", "mps"]


def test_terminal_phases() -> None:
    assert {PodPhase.SUCCEEDED, PodPhase.FAILED} == TERMINAL_PHASES
