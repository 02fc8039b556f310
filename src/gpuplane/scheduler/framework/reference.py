"""The plain reference: the same profile, one node at a time, as kube-scheduler loops.

``ReferenceFramework`` differs from ``Framework`` only in how Filter and Score run: it walks the
nodes from the round-robin start calling each plugin's ``filter_node`` until it has found one
more feasible node than it needs, and scores each feasible node with ``score_node`` and the
plugins' list normalisation. Tests check that both choose the same nodes and explain failures
the same way on random clusters; the throughput benchmark uses it as the baseline.
"""

from __future__ import annotations

import numpy as np

from gpuplane.scheduler.framework.cycle import Framework
from gpuplane.scheduler.framework.explain import Diagnosis, ReasonGroup, filter_error
from gpuplane.scheduler.framework.interfaces import pre_filter_nodes
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.status import Code, Status
from gpuplane.scheduler.framework.types import IntArray, PodInfo


def error_diagnosis(st: ClusterState, status: Status) -> Diagnosis:
    """The attempt ends at the first node whose Filter answered Error."""
    message = filter_error(status.plugin, status.message)
    return Diagnosis(st.num_nodes, st.snap.node_names, error=message)


def diagnosis_from_statuses(st: ClusterState, statuses: dict[int, Status]) -> Diagnosis:
    """Per-node statuses grouped by (plugin, code, reason)."""
    buckets: dict[tuple[str, Code, str], list[int]] = {}
    for i, status in statuses.items():
        for reason in status.reasons:
            buckets.setdefault((status.plugin, status.code, reason), []).append(i)
    groups = tuple(
        ReasonGroup(plugin, code, reason, np.array(sorted(nodes), dtype=np.int64))
        for (plugin, code, reason), nodes in sorted(buckets.items())
    )
    plugins = frozenset(s.plugin for s in statuses.values())
    return Diagnosis(st.num_nodes, st.snap.node_names, groups, unschedulable_plugins=plugins)


class ReferenceFramework(Framework):
    def filter_nodes(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> IntArray | Diagnosis:
        named = pre_filter_nodes(cs)
        if named is not None:
            return self._filter_named(cs, pod, st, named)
        n, k, start = st.num_nodes, self.num_to_find(st), st.next_start
        feasible: list[int] = []
        statuses: dict[int, Status] = {}
        processed = n
        for offset in range(n):
            i = (start + offset) % n
            status = self.run_filters_with_nominated(cs, pod, st, i)
            if status.code is Code.ERROR:
                st.next_start = (start + offset) % n
                return error_diagnosis(st, status)
            if not status.ok:
                statuses[i] = status
            elif len(feasible) == k:
                processed = offset  # the search stops when one more feasible node turns up
                break
            else:
                feasible.append(i)
        st.next_start = (start + processed) % n
        if not feasible:
            return diagnosis_from_statuses(st, statuses)
        return np.array(feasible, dtype=np.int64)

    def _filter_named(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, named: IntArray
    ) -> IntArray | Diagnosis:
        """Only the nodes PreFilter named, in index order; the others get no status."""
        k = self.num_to_find(st)
        feasible: list[int] = []
        statuses: dict[int, Status] = {}
        for offset, i in enumerate(int(x) for x in named):
            status = self.run_filters_with_nominated(cs, pod, st, i)
            if status.code is Code.ERROR:
                st.next_start = (st.next_start + offset) % named.size
                return error_diagnosis(st, status)
            if not status.ok:
                statuses[i] = status
            else:
                feasible.append(i)
        processed = named.size if len(feasible) <= k else k + len(statuses)
        st.next_start = (st.next_start + processed) % named.size if named.size else 0
        if not feasible:
            return diagnosis_from_statuses(st, statuses)
        return np.array(feasible[:k], dtype=np.int64)

    def prioritize(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray
    ) -> IntArray:
        total = [0] * nodes.size
        skipped = self._skipped(cs, pod, st, nodes)
        for plugin, weight in self.scores:
            if plugin.name in skipped:
                continue
            scores = [plugin.score_node(cs, pod, st, int(i)) for i in nodes]
            normalizer = self.normalizers.get(plugin.name)
            if normalizer is not None:
                scores = normalizer.normalize_reference(scores)
            for j, value in enumerate(scores):
                if not 0 <= value <= 100:
                    raise ValueError(f"plugin {plugin.name} returned a score outside [0, 100]")
                total[j] += weight * value
        return np.array(total, dtype=np.int64)
