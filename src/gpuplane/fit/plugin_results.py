"""Per-plugin results of one scheduling cycle, in kube-scheduler-simulator's form.

kube-scheduler-simulator (kubernetes-sigs, ``simulator/scheduler/plugin``) records on each pod
what every plugin said: ``filter-result`` maps node -> plugin -> ``"passed"`` or the plugin's
reason, for the plugins that ran (a node's filters stop at the first rejection); ``score-result``
maps node -> plugin -> the plugin's raw score and ``finalscore-result`` the normalised score times
the plugin's weight, both for the feasible nodes and as strings; ``selected-node`` the node
chosen. gpuplane fills the same maps from its framework, for the pod's cycle on the cluster with
the workload's earlier pods assumed where the answer placed them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from gpuplane.fit.result import FitAnswer, Outcome
from gpuplane.fit.workload import FitWorkload
from gpuplane.scheduler.framework.cycle import Framework
from gpuplane.scheduler.framework.filtering import candidates, filter_pass
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.state import ClusterState, CycleState, Placement
from gpuplane.scheduler.framework.status import Code
from gpuplane.scheduler.framework.types import PodInfo

PASSED = "passed"


@dataclass(frozen=True, slots=True)
class PluginResults:
    pre_filter_status: Mapping[str, str]  # plugin -> "success" or its message
    filter: Mapping[str, Mapping[str, str]]
    score: Mapping[str, Mapping[str, str]]
    final_score: Mapping[str, Mapping[str, str]]


def _filters(
    fw: Framework, cs: CycleState, pod: PodInfo, st: ClusterState
) -> tuple[dict[str, dict[str, str]], np.ndarray]:
    names = st.snap.node_names
    remaining = candidates(cs, st)
    out: dict[str, dict[str, str]] = {names[i]: {} for i in np.flatnonzero(remaining)}
    _, masks = filter_pass(fw.filters, cs, pod, st)
    for plugin, mask in masks:
        alive = np.flatnonzero(remaining)
        if mask is None:
            for i in alive:
                out[names[i]][plugin.name] = PASSED
            continue
        failed = alive[~mask[alive]]
        for i in alive[mask[alive]]:
            out[names[i]][plugin.name] = PASSED
        for group in plugin.filter_reasons(cs, pod, st, failed) if failed.size else ():
            for i in group.nodes.tolist():
                out[names[i]][plugin.name] = group.reason
        remaining[failed] = False
    return out, np.flatnonzero(remaining)


def _scores(
    fw: Framework, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: np.ndarray
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    names = st.snap.node_names
    raw: dict[str, dict[str, str]] = {names[i]: {} for i in nodes}
    final: dict[str, dict[str, str]] = {names[i]: {} for i in nodes}
    skipped = {p.name for p in fw.pre_scores if p.pre_score(cs, pod, st, nodes).code is Code.SKIP}
    for plugin, weight in fw.scores:
        if plugin.name in skipped:
            continue
        scores = plugin.score(cs, pod, st, nodes)
        normalizer = fw.normalizers.get(plugin.name)
        normalised = normalizer.normalize(scores.copy()) if normalizer is not None else scores
        for k, i in enumerate(nodes.tolist()):
            raw[names[i]][plugin.name] = str(int(scores[k]))
            final[names[i]][plugin.name] = str(int(normalised[k]) * weight)
    return raw, final


def plugin_results(
    fw: Framework,
    snap: ClusterSnapshot,
    pod: PodInfo,
    before: Sequence[tuple[PodInfo, str, tuple[int, ...]]] = (),
) -> PluginResults:
    """The simulator's maps for ``pod`` with ``before`` (pod, node, GPUs) assumed first."""
    st = ClusterState(snap)
    for other, node, gpus in before:
        st.assume(other, Placement(st.index_of(node), gpus))
    cs = CycleState()
    status: dict[str, str] = {}
    for plugin in fw.pre_filters:
        result = plugin.pre_filter(cs, pod, st)
        if result.code is Code.SKIP:  # its Filter does not run (kube's PreFilter Skip)
            cs.skip_filter.add(plugin.name)
            status[plugin.name] = "skip"
            continue
        status[plugin.name] = "success" if result.ok else result.message
        if not result.ok:
            return PluginResults(status, {}, {}, {})
    filters, feasible = _filters(fw, cs, pod, st)
    raw, final = _scores(fw, cs, pod, st, feasible) if feasible.size else ({}, {})
    return PluginResults(status, filters, raw, final)


def results_for(
    scheduler: Scheduler,
    snap: ClusterSnapshot,
    fw: FitWorkload,
    answer: FitAnswer,
    wanted: Collection[str],
) -> dict[str, PluginResults]:
    """The maps of the workload pods named in ``wanted`` (pod keys), each with the pods before it
    assumed where the answer placed them."""
    out: dict[str, PluginResults] = {}
    before: list[tuple[PodInfo, str, tuple[int, ...]]] = []
    for wp, p in zip(fw.pods, answer.pods, strict=True):
        if p.pod in wanted and wp.info.scheduler_name in scheduler.frameworks:
            out[p.pod] = plugin_results(
                scheduler.frameworks[wp.info.scheduler_name], snap, wp.info, before
            )
        if p.node is not None and p.outcome in (Outcome.FITS, Outcome.FITS_AFTER_PREEMPTION):
            gpus = p.gpus.kubelet.gpus if p.gpus is not None and p.gpus.kubelet else ()
            before.append((wp.info, p.node, gpus))
    return out
