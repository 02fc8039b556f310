"""First-fit placement: the placeholder scheduler until the scheduling framework lands.

For each pending pod, in kube-scheduler's activeQ order (priority high first, then oldest), the
first node (in node order) that passes the filters gets it. Filters and their failure wording
follow kube-scheduler's default filter plugins in their default order, and a node counts under
the first filter it fails: NodeUnschedulable, TaintToleration (a NotReady node carries the
``node.kubernetes.io/not-ready`` taint, a lost node ``unreachable``), NodeAffinity (nodeSelector
and required node affinity), NodeResourcesFit (every insufficient resource is counted).

Gangs (scheduler-plugins Coscheduling): the pending members of a PodGroup are placed all together
or not at all, and only when at least ``minMember`` members exist.

Static filter results are cached per snapshot ``generation`` (bumped by the twin whenever node
labels, taints, readiness or cordoning change), so a cycle costs a few vector operations.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gpuplane.twin.node_filters import (
    NODE_AFFINITY,
    NOT_READY_TAINT,
    UNSCHEDULABLE,
    matches_affinity,
    matches_selector,
    taint_reason,
    untolerated_taint,
)
from gpuplane.twin.placement import (
    Binding,
    ClusterSnapshot,
    NodeView,
    PendingPod,
    PlacementDecision,
    Unschedulable,
    fit_error,
)
from gpuplane.twin.spec import PODS

_StaticKey = tuple[object, ...]


class FirstFitPlacement:
    name = "first-fit"

    def __init__(self) -> None:
        self._generation = -1
        self._static: dict[_StaticKey, tuple[np.ndarray, list[str | None]]] = {}

    # ----- static filters (cached) -----
    def _static_filter(
        self, snap: ClusterSnapshot, pod: PendingPod, generation: int
    ) -> tuple[np.ndarray, list[str | None]]:
        if generation != self._generation:
            self._static.clear()
            self._generation = generation
        key: _StaticKey = (
            pod.tolerations,
            tuple(sorted(pod.node_selector.items())),
            repr(pod.affinity),
        )
        hit = self._static.get(key)
        if hit is not None:
            return hit
        reasons: list[str | None] = []
        for node in snap.nodes:
            reasons.append(_static_reason(node, pod))
        ok = np.array([r is None for r in reasons], dtype=bool)
        self._static[key] = (ok, reasons)
        return ok, reasons

    # ----- decision -----
    def decide(self, snapshot: ClusterSnapshot, pending: Sequence[PendingPod]) -> PlacementDecision:
        generation = snapshot.generation
        free = {k: v.copy() for k, v in snapshot.free.items()}
        ordered = sorted(pending, key=lambda p: (-p.priority, p.created_s, p.uid))
        groups: dict[str, list[PendingPod]] = {}
        for pod in ordered:
            if pod.pod_group is not None:
                groups.setdefault(pod.pod_group, []).append(pod)
        bindings: list[Binding] = []
        failed: list[Unschedulable] = []
        done_groups: set[str] = set()
        # Free capacity only shrinks within a cycle, so once a pod of an equivalence class (same
        # requests and filters) fails, every later pod of that class fails the same way.
        class_failed: dict[tuple[object, ...], str] = {}
        for pod in ordered:
            if pod.pod_group is None:
                cls = _equivalence_key(pod)
                message = class_failed.get(cls)
                if message is not None:
                    failed.append(Unschedulable(pod.uid, message))
                    continue
                node = self._place(snapshot, pod, free, generation)
                if isinstance(node, str):
                    class_failed[cls] = node
                    failed.append(Unschedulable(pod.uid, node))
                else:
                    bindings.append(Binding(pod.uid, snapshot.nodes[node].name))
            elif pod.pod_group not in done_groups:
                done_groups.add(pod.pod_group)
                b, f = self._place_gang(
                    snapshot, pod.pod_group, groups[pod.pod_group], free, generation
                )
                bindings.extend(b)
                failed.extend(f)
        return PlacementDecision(tuple(bindings), tuple(failed))

    def _place(
        self, snap: ClusterSnapshot, pod: PendingPod, free: dict[str, np.ndarray], generation: int
    ) -> int | str:
        """Index of the chosen node (and charge it in ``free``), or the FitError message."""
        static_ok, static_reasons = self._static_filter(snap, pod, generation)
        need = dict(pod.requests)
        need[PODS] = need.get(PODS, 0) + 1
        mask = static_ok.copy()
        insufficient: dict[str, np.ndarray] = {}
        for res_name, amount in need.items():
            arr = free.get(res_name)
            if arr is None:
                ok = np.array(
                    [n.free_other.get(res_name, 0) >= amount for n in snap.nodes], dtype=bool
                )
            else:
                ok = arr >= amount
            insufficient[res_name] = ~ok
            mask &= ok
        hits = np.flatnonzero(mask)
        if hits.size:
            i = int(hits[0])
            for res_name, amount in need.items():
                if res_name in free:
                    free[res_name][i] -= amount
            return i
        counts: dict[str, int] = {}
        for reason in static_reasons:
            if reason is not None:
                counts[reason] = counts.get(reason, 0) + 1
        for res_name, bad in insufficient.items():
            n = int(np.count_nonzero(bad & static_ok))
            if n:
                label = "Too many pods" if res_name == PODS else f"Insufficient {res_name}"
                counts[label] = counts.get(label, 0) + n
        return fit_error(len(snap.nodes), counts)

    def _place_gang(
        self,
        snap: ClusterSnapshot,
        group: str,
        members: list[PendingPod],
        free: dict[str, np.ndarray],
        generation: int,
    ) -> tuple[list[Binding], list[Unschedulable]]:
        info = snap.pod_groups.get(group)
        if info is None:
            msg = f'PodGroup "{group}" not found'
            return [], [Unschedulable(p.uid, msg) for p in members]
        min_member, bound = info
        if bound + len(members) < min_member:
            msg = (
                f"pre-filter pod cannot find enough sibling pods, current pods number: "
                f"{bound + len(members)}, minMember of group: {min_member}"
            )
            return [], [Unschedulable(p.uid, msg) for p in members]
        trial = {k: v.copy() for k, v in free.items()}
        chosen: list[Binding] = []
        for pod in members:
            node = self._place(snap, pod, trial, generation)
            if isinstance(node, str):
                msg = f"gang {group} cannot be placed together (all or nothing): {node}"
                return [], [Unschedulable(p.uid, msg) for p in members]
            chosen.append(Binding(pod.uid, snap.nodes[node].name))
        for k in free:
            free[k][:] = trial[k]
        return chosen, []


def _equivalence_key(pod: PendingPod) -> tuple[object, ...]:
    return (
        tuple(sorted(pod.requests.items())),
        pod.tolerations,
        tuple(sorted(pod.node_selector.items())),
        repr(pod.affinity),
    )


def _static_reason(node: NodeView, pod: PendingPod) -> str | None:
    if node.unschedulable:
        return UNSCHEDULABLE
    taints = list(node.taints)
    if not node.ready:
        taints.insert(0, NOT_READY_TAINT)
    taint = untolerated_taint(taints, pod.tolerations)
    if taint is not None:
        return taint_reason(taint)
    if not matches_selector(pod.node_selector, node.labels) or not matches_affinity(
        pod.affinity, node.labels
    ):
        return NODE_AFFINITY
    return None
