"""For a pod the kubelet would reject (TopologyAffinityError): the nodes whose kubelet would
admit it, among those kube-scheduler's filters let through.

kube-scheduler does not see NUMA, so it may keep choosing the node whose kubelet rejects the pod
(a Deployment's replacement pods land there again); the remedy names the nodes that would work,
for a nodeAffinity, or for a NUMA-aware profile (gpuplane's, or NodeResourceTopologyMatch).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpuplane.fit.framework_view import FrameworkView
from gpuplane.fit.gpu_answer import place_on_node
from gpuplane.fit.model import FitCluster
from gpuplane.fit.plugin_results import PASSED, plugin_results
from gpuplane.fit.result import Outcome, PodAnswer, Remedy
from gpuplane.fit.workload import WorkloadPod
from gpuplane.scheduler.framework.scheduler import Scheduler

# Feasible nodes whose admission is tried, and names listed.
MAX_TRIED = 256
MAX_LISTED = 8


def aligned_nodes(
    scheduler: Scheduler,
    cluster: FitCluster,
    view: FrameworkView,
    unplaced: Sequence[WorkloadPod],
    answers: Mapping[str, PodAnswer],
) -> tuple[Remedy, ...]:
    out = []
    seen: set[str] = set()
    nodes = {n.name: n for n in cluster.nodes}
    for wp in unplaced:
        answer = answers[wp.info.uid]
        if answer.outcome is not Outcome.REJECTED_BY_KUBELET or wp.template in seen:
            continue
        seen.add(wp.template)
        fw = scheduler.frameworks.get(wp.info.scheduler_name)
        if fw is None:
            continue
        results = plugin_results(fw, view.snapshot, wp.info)
        feasible = [
            n
            for n, verdicts in results.filter.items()
            if verdicts and all(v == PASSED for v in verdicts.values())
        ]
        admit = []
        for name in feasible[:MAX_TRIED]:
            _, verdict, _ = place_on_node(
                nodes[name], view.holdings[name], wp.info, frozenset(), frozenset()
            )
            if verdict.admit and verdict.known:
                admit.append(name)
        if admit:
            listed = ", ".join(admit[:MAX_LISTED]) + (
                f" and {len(admit) - MAX_LISTED} more" if len(admit) > MAX_LISTED else ""
            )
            summary = (
                f"{wp.workload}: the kubelet would admit it on {listed}; kube-scheduler does not "
                "see NUMA, so pin it there (nodeAffinity) or use a NUMA-aware profile"
            )
        else:
            summary = (
                f"{wp.workload}: no node kube-scheduler lets through would admit it under its "
                f"kubelet's Topology Manager policy ({len(feasible)} tried)"
            )
        out.append(Remedy("kubelet-aligned-nodes", summary, (), (), 1 if admit else 0))
    return tuple(out)
