"""One pod on one node, as the extender judges it: would the kubelet admit it, does the GPU set
it would get meet what the pod declares, and if not, could freeing GPUs (preemption) ever help.

The kubelet's verdict is ``fit``'s (the Topology Manager and the device plugin's choice on the
assumed free GPUs, as :func:`gpuplane.fit.gpu_answer.place_on_node` admits a pod), without
the alternative GPU sets ``fit`` also shows (gpuplane's and NVIDIA's choices): the extender does
not use them, and they cost more than the admission itself. Reasons are worded
for kube-scheduler's "0/N nodes are available: <count> <reason>, ..." line, where nodes with the
same text are counted together: they name no node and no GPU index.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass

from gpuplane.api.qos import QosClass
from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.fit.extender.needs import GpuNeeds
from gpuplane.fit.gpu_answer import numa_split
from gpuplane.fit.holdings import NodeHolding, container_requests, kubelet_state
from gpuplane.fit.model import FitNode
from gpuplane.kubelet.admission import AdmitResult, admit_pod
from gpuplane.kubelet.device_choice import gpu_chooser
from gpuplane.kubelet.gpu_sets import pick_gpus
from gpuplane.scheduler.framework.types import PodInfo
from gpuplane.topology.collective import best_ring
from gpuplane.topology.model import NodeTopology


@dataclass(frozen=True, slots=True)
class NodeEval:
    fits: bool
    reason: str = ""
    unresolvable: bool = False  # preemption cannot make it fit
    bottleneck_gbps: float = 0.0  # ring bottleneck of the set the kubelet would give
    used_after: float = 0.0  # the node's GPUs in use once the pod is placed (0..1)
    # What the kubelet's admission gave the pod (GPUs, exclusive CPUs), when the node's kubelet
    # manages them: the pod's holding once assumed there, without replaying the node.
    placed: tuple[tuple[int, ...], tuple[int, ...]] | None = None


# Verdicts by pod key, then by the node's interned state (``ExtenderView.keys``).
EvalCache = MutableMapping[tuple[object, ...], dict[int, NodeEval]]
_EMPTY = NodeHolding("", {}, {}, 0, frozenset())


def pod_key(pod: PodInfo, needs: GpuNeeds) -> tuple[object, ...]:
    """Pods with equal keys get equal verdicts on equal nodes."""
    containers = tuple(
        (c.name, tuple(sorted(c.requests.items())), c.init) for c in pod.container_list()
    )
    return (pod.qos, containers, tuple(sorted(pod.requests.items())), needs)


def _free(node: FitNode, holding: NodeHolding) -> list[int]:
    return [g for g in range(node.gpus) if g not in holding.taken_gpus]


def _policy(node: FitNode) -> str:
    return str(node.kubelet.topology_manager_policy)


def _admit(node: FitNode, topo: NodeTopology, holding: NodeHolding, pod: PodInfo) -> AdmitResult:
    """The kubelet's admission of ``pod`` with ``holding`` taken (as ``place_on_node``)."""
    cfg = node.kubelet
    state = kubelet_state(topo, cfg, holding.taken_gpus, holding.taken_cpus)
    guaranteed = pod.qos is QosClass.GUARANTEED
    choose = gpu_chooser(topo, cfg.gpu_allocation)
    return admit_pod(state, container_requests(pod), guaranteed=guaranteed, choose=choose)


def _rejected(node: FitNode, topo: NodeTopology, holding: NodeHolding, pod: PodInfo) -> NodeEval:
    need = pod.requests.get(NVIDIA_GPU, 0)
    policy = _policy(node)
    never = _admit(node, topo, _EMPTY, pod)
    if not never.admit:
        if need and max(numa_split(topo, range(node.gpus)).values(), default=0) < need:
            text = f"no NUMA node has {need} GPUs (kubelet {policy} can never align the pod)"
        else:
            text = f"kubelet {policy} can never admit the pod ({never.reason})"
        return NodeEval(False, text, unresolvable=True)
    free = _free(node, holding)
    if need and len(free) < need:
        return NodeEval(False, f"only {len(free)} free GPUs, pod asks {need}")
    if need and max(numa_split(topo, free).values(), default=0) < need:
        text = f"{len(free)} free GPUs on different NUMA nodes (kubelet {policy} would reject)"
        return NodeEval(False, text)
    return NodeEval(False, f"CPU/memory/GPU not alignable on one NUMA node (kubelet {policy})")


def _needs_unmet(
    node: FitNode, topo: NodeTopology, holding: NodeHolding, need: int, needs: GpuNeeds
) -> NodeEval:
    wanted = needs.describe()
    best_any = pick_gpus(topo, range(node.gpus), need)
    if best_any is None or needs.unmet(topo, best_any.gpus, best_any.bottleneck_gbps):
        return NodeEval(False, f"no {need} GPUs of the node form {wanted}", unresolvable=True)
    best_free = pick_gpus(topo, _free(node, holding), need)
    if best_free is None or needs.unmet(topo, best_free.gpus, best_free.bottleneck_gbps):
        return NodeEval(False, f"no {need} free GPUs form {wanted}")
    return NodeEval(False, f"the kubelet's GPU choice is not {wanted}, though one is free")


def _evaluate(node: FitNode, holding: NodeHolding, pod: PodInfo, needs: GpuNeeds) -> NodeEval:
    need = pod.requests.get(NVIDIA_GPU, 0)
    if need > node.gpus:
        text = f"node has {node.gpus} GPUs, pod asks {need}" if node.gpus else "node has no GPUs"
        return NodeEval(False, text, unresolvable=True)
    topo = node.hardware.topology
    if topo is None:
        if needs.any and need:
            return NodeEval(False, "no hardware model to check the GPU set", unresolvable=True)
        return NodeEval(True)
    result = _admit(node, topo, holding, pod)
    if not result.admit:
        return _rejected(node, topo, holding, pod)
    placed = None
    if node.kubelet.manages_resources:
        cpus = tuple(sorted(c for a in result.allocations.values() for c in a.cpus))
        placed = (tuple(result.gpus), cpus)
    if not need:
        return NodeEval(True, placed=placed)
    gpus = tuple(sorted(result.gpus))
    bottleneck = best_ring(topo, gpus).bottleneck_gbps if len(gpus) > 1 else 0.0
    if needs.any and needs.unmet(topo, gpus, bottleneck):
        return _needs_unmet(node, topo, holding, need, needs)
    used = (node.gpus - len(_free(node, holding)) + need) / node.gpus
    return NodeEval(True, bottleneck_gbps=bottleneck, used_after=used, placed=placed)


def evaluate(node: FitNode, holding: NodeHolding, pod: PodInfo, needs: GpuNeeds) -> NodeEval:
    """``pod`` on ``node`` (see the module docstring)."""
    return _evaluate(node, holding, pod, needs)
