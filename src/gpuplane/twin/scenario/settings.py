"""The twin's own knobs (from the scenario's ``control_plane``), with Kubernetes' defaults."""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.scheduler.framework.config import ProfileConfig


@dataclass(frozen=True, slots=True)
class TwinSettings:
    scheduler_name: str = "default-scheduler"
    # KubeSchedulerConfiguration profiles; empty: one default profile named scheduler_name.
    scheduler_profiles: tuple[ProfileConfig, ...] = ()
    # kube-scheduler: podInitialBackoffSeconds / podMaxBackoffSeconds (KubeSchedulerConfiguration).
    pod_initial_backoff_s: float = 1.0
    pod_max_backoff_s: float = 10.0
    # kube-scheduler moves pods that sat unschedulable this long back to the active queue
    # (podMaxInUnschedulablePodsDuration, 5 min), checking every 30 s.
    unschedulable_flush_s: float = 300.0
    unschedulable_flush_check_s: float = 30.0
    # kubelet container restart back-off: 10 s doubling to 5 min (CrashLoopBackOff).
    crashloop_initial_s: float = 10.0
    crashloop_max_s: float = 300.0
    # job controller pod-failure back-off: 10 s doubling to 6 min.
    job_backoff_initial_s: float = 10.0
    job_backoff_max_s: float = 360.0
    # node lifecycle controller: node-monitor-grace-period before a silent node is NotReady,
    # then taint-based eviction after the default tolerationSeconds for unreachable nodes.
    node_monitor_grace_s: float = 40.0
    default_toleration_s: float = 300.0
    # Time from binding to the container running (image pull, container start).
    pod_start_s: float = 0.0
    # Time from binding to the kubelet's admission on nodes whose admission can refuse or
    # align (Topology Manager, static CPU/memory manager): watch and sync-loop latency. It also
    # paces the reject-and-replace loop of a controller whose pods a node keeps refusing.
    kubelet_admission_delay_s: float = 1.0
    metrics_interval_s: float = 30.0
    keep_events: bool = True
