"""The twin's cluster at one instant as ``fit``'s values: one node-admission view.

``fit`` (the scheduler extender, ``gpuplane fit``) computes on a ``FitCluster``, what the API
server would show of a cluster; the twin keeps its own fast paths (the scheduler's incremental
``SnapshotBuilder``, the kubelet's ``NodeAdmission``). This projection is the bridge between
them, so that one cluster state can be asked both ways and the answers compared
(``tests/scenario/test_fit_agrees_with_twin.py`` does it on every golden scenario).

- Nodes: labels, taints as the API shows them (a NotReady or lost node carries the not-ready
  taint, as in the scheduler's snapshot), cordoning, allocatable with ``nvidia.com/gpu`` the
  device plugin's advertised healthy devices (the twin keeps devices apart from
  ``allocatable``; an API Node has them there), the MIG resources the plugin advertises, the
  node's exact hardware model (``exact=True``: the twin built it) and KubeletConfiguration, and
  each GPU's MIG layout.
- Pods: every pod still in the API (not deleted), in creation order, with the ``PodInfo`` the
  twin's scheduler reads (``SnapshotBuilder.pod_info``). A bound pod names the devices the
  twin's kubelet gave it (``gpu_ids``), as a pod with the ``gpuplane.io/gpu-ids`` annotation
  does, so fit holds those instead of replaying the kubelet; a pending pod names none.
- PodGroups with their member counts as Coscheduling counts them, and the DRA snapshot the
  scheduler would read.

Not projected: what the twin alone knows and the API does not carry: the static CPU manager's
exclusive CPUs per pod, fractional GPU shares (``gpuplane.io/gpu-milli``), and which GPU is
unhealthy (the API shows only the advertised count, so fit takes the first ones as healthy).
"""

from __future__ import annotations

from collections.abc import Iterable

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.fit.model import FitCluster, FitNode, FitPod
from gpuplane.scheduler.framework.types import PodGroupInfo
from gpuplane.slicing.mig.controller_types import MIG_PROFILE_ANNOTATION
from gpuplane.topology.gfd_hardware import InferredHardware
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import Node, Pod
from gpuplane.twin.cluster.store import ObjectStore
from gpuplane.twin.scheduling.snapshot import SnapshotBuilder, scheduler_taints

HARDWARE_SOURCE = "the twin's node"


def project_node(node: Node, store: ObjectStore) -> FitNode:
    """``node`` as fit's ``FitNode`` (see the module docstring)."""
    allocatable = dict(node.allocatable) | {NVIDIA_GPU: store.gpu_allocatable(node)}
    layouts = tuple(tuple(i.profile for i in lay.instances) for lay in node.mig_layouts or ())
    return FitNode(
        node.name,
        dict(node.labels),
        scheduler_taints(node),
        node.unschedulable,
        allocatable,
        InferredHardware(node.topology, HARDWARE_SOURCE, exact=True),
        kubelet=node.kubelet,
        kubelet_source=f"pool {node.pool!r} of the twin's scenario",
        mig_layout=layouts,
    )


def _start_s(pod: Pod, now_s: float) -> float:
    # As the scheduler's BoundPod: when it started, else when it was bound.
    start = pod.started_s if pod.started_s is not None else pod.scheduled_s
    return start if start is not None else now_s


def project_pod(pod: Pod, builder: SnapshotBuilder) -> FitPod:
    """``pod`` as fit's ``FitPod``: bound ones name the devices the twin's kubelet gave them."""
    bound = pod.node_name is not None
    return FitPod(
        builder.pod_info(pod),
        pod.node_name,
        str(pod.phase),
        _start_s(pod, builder.c.now) if bound else 0.0,
        labels=dict(pod.template.labels),
        owner=pod.owner,
        gpu_ids=pod.gpu_ids if bound else None,
        mig_profile=pod.template.annotations.get(MIG_PROFILE_ANNOTATION) or None,
    )


def _pod_groups(store: ObjectStore, pods: Iterable[Pod]) -> dict[str, PodGroupInfo]:
    """Coscheduling's counts: members that exist and are not terminal, and those bound."""
    counts = {key: [0, 0] for key in store.pod_groups}
    for p in pods:
        key = f"{p.namespace}/{p.pod_group}"
        if p.pod_group is not None and p.is_active and key in counts:
            counts[key][0] += 1
            counts[key][1] += p.node_name is not None
    return {
        key: PodGroupInfo(key, g.min_member, g.schedule_timeout_s, g.created_s, *counts[key])
        for key, g in store.pod_groups.items()
    }


def project_cluster(cluster: Cluster, builder: SnapshotBuilder | None = None) -> FitCluster:
    """The twin's cluster now as fit's ``FitCluster``. ``builder`` (the scheduler's, or a fresh
    one) makes the pods' ``PodInfo``; it is only read."""
    builder = builder or SnapshotBuilder(cluster)
    store = cluster.store
    pods = sorted((p for p in store.pods.values() if not p.is_deleted), key=lambda p: p.created_s)
    nodes = [store.nodes[name] for name in store.node_order]
    pending = [p for p in pods if p.node_name is None and p.is_active]
    return FitCluster(
        tuple(project_node(n, store) for n in nodes),
        tuple(project_pod(p, builder) for p in pods),
        pod_groups=_pod_groups(store, pods),
        dra=cluster.dra.snapshot(nodes, pending) if cluster.dra is not None else None,
        now_s=cluster.now,
    )
