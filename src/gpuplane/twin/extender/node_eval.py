"""One pod on one node, as the extender judges it: would the kubelet admit it, does the GPU set
it would get meet what the pod declares, and if not, could freeing GPUs (preemption) ever help.

The kubelet's verdict is ``fit``'s (:func:`gpuplane.twin.fit.gpu_answer.place_on_node`, the
Topology Manager and the device plugin's choice on the assumed free GPUs). Reasons are worded
for kube-scheduler's "0/N nodes are available: <count> <reason>, ..." line, where nodes with the
same text are counted together: they name no node and no GPU index.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.kubelet.gpu_sets import pick_gpus
from gpuplane.scheduler.framework.types import PodInfo
from gpuplane.topology.model import NodeTopology
from gpuplane.twin.extender.needs import GpuNeeds
from gpuplane.twin.fit.gpu_answer import numa_split, place_on_node
from gpuplane.twin.fit.holdings import NodeHolding
from gpuplane.twin.fit.model import FitNode


@dataclass(frozen=True, slots=True)
class NodeEval:
    fits: bool
    reason: str = ""
    unresolvable: bool = False  # preemption cannot make it fit
    bottleneck_gbps: float = 0.0  # ring bottleneck of the set the kubelet would give
    used_after: float = 0.0  # the node's GPUs in use once the pod is placed (0..1)


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


def _rejected(node: FitNode, topo: NodeTopology, holding: NodeHolding, pod: PodInfo) -> NodeEval:
    need = pod.requests.get(NVIDIA_GPU, 0)
    policy = _policy(node)
    _, never, _ = place_on_node(node, _EMPTY, pod, frozenset(), frozenset(), bottleneck_range=False)
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
    answer, verdict, _ = place_on_node(
        node, holding, pod, frozenset(), frozenset(), bottleneck_range=False
    )
    if not verdict.admit:
        return _rejected(node, topo, holding, pod)
    if not need:
        return NodeEval(True)
    got = answer.kubelet if answer is not None else None
    gpus, bottleneck = (got.gpus, got.bottleneck_gbps) if got is not None else ((), 0.0)
    if needs.any and needs.unmet(topo, gpus, bottleneck):
        return _needs_unmet(node, topo, holding, need, needs)
    used = (node.gpus - len(_free(node, holding)) + need) / node.gpus
    return NodeEval(True, bottleneck_gbps=bottleneck, used_after=used)


def evaluate(node: FitNode, holding: NodeHolding, pod: PodInfo, needs: GpuNeeds) -> NodeEval:
    """``pod`` on ``node`` (see the module docstring)."""
    return _evaluate(node, holding, pod, needs)
