"""The scheduling framework, modelled on kube-scheduler's (pkg/scheduler): a scheduling queue,
extension points as Protocols, profiles configured like KubeSchedulerConfiguration, a plugin
registry, and ``Scheduler.decide(snapshot, pending) -> SchedulingDecision``, a pure decision over
a columnar snapshot of the cluster. Filter and Score run over numpy arrays of nodes; a per-node
reference (``ReferenceFramework``) runs the same plugins one node at a time.

Assumptions: no clock and no I/O inside a decision; the caller (the twin) applies bindings,
evictions and nominations and feeds cluster events to the queue. See ``docs/scheduler.md``.
"""

from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.decision import (
    Binding,
    Preemption,
    SchedulingDecision,
    Unschedulable,
)
from gpuplane.scheduler.framework.queue import SchedulingQueue
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot, make_snapshot

__all__ = [
    "Binding",
    "ClusterSnapshot",
    "Preemption",
    "ProfileConfig",
    "Scheduler",
    "SchedulingDecision",
    "SchedulingQueue",
    "Unschedulable",
    "make_snapshot",
]
