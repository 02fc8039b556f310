"""The preempt verb: of the candidate nodes kube's DefaultPreemption found (each with the pods it
would evict), keep those where, once the victims are gone, the kubelet would admit the pod and
its GPU set meets its needs. A node dropped here would evict pods for nothing: the count of
freed GPUs is enough for kube, but the freed GPUs may sit on the wrong NUMA node or island.

Victims are not changed (kube-scheduler maps the UIDs back to its own pods; gpuplane adds none).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuplane.fit.extender.needs import GpuNeeds
from gpuplane.fit.extender.node_eval import evaluate
from gpuplane.fit.extender.view import ExtenderView, without_pods
from gpuplane.scheduler.framework.types import PodInfo


def preempt_nodes(
    view: ExtenderView,
    pod: PodInfo,
    needs: GpuNeeds,
    victims: Mapping[str, frozenset[str]],
) -> tuple[str, ...]:
    """The candidate nodes where evicting ``victims[node]`` (pod UIDs) makes the pod fit; nodes
    the view does not know are kept (kube's own count decides there)."""
    kept = []
    for node, uids in victims.items():
        if node not in view.nodes:
            kept.append(node)
            continue
        after = without_pods(view, node, uids)
        if evaluate(after.nodes[node], after.holdings[node], pod, needs).fits:
            kept.append(node)
    return tuple(kept)
