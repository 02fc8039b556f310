"""The scheduling framework, modelled on kube-scheduler's (pkg/scheduler): a scheduling queue,
extension points as Protocols, profiles configured like KubeSchedulerConfiguration, a plugin
registry, and ``Scheduler.decide(snapshot, pending) -> SchedulingDecision``, a pure decision over
a columnar snapshot of the cluster. Filter and Score run over numpy arrays of nodes; a per-node
reference (``ReferenceFramework``) runs the same plugins one node at a time.

Assumptions: no clock and no I/O inside a decision, and no write: plugins record what must be
written at bind time in the Handle's write sink and the decision carries it (``writes``); the
caller (the twin) applies those writes, bindings, evictions and nominations and feeds cluster
events to the queue. The framework imports no plugin: the caller passes a plugin registry
(``gpuplane.scheduler.plugins.registry``). See ``docs/scheduler.md``.
"""

from gpuplane.scheduler.framework.config import ProfileConfig, gpuplane_profile
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
    "gpuplane_profile",
    "make_snapshot",
]
