"""``PodPhase`` (k8s.io/api core/v1 ``PodPhase``): where a pod is in its life.

``Unknown`` is the phase the API still defines for a pod whose node stopped reporting; the
kubelet no longer sets it, and the twin never does (its lost nodes fail their pods instead).
"""

from __future__ import annotations

from enum import StrEnum


class PodPhase(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


TERMINAL_PHASES = frozenset({PodPhase.SUCCEEDED, PodPhase.FAILED})
