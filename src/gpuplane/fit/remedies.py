"""What would make the unplaced pods fit, and how many more pods like these fit at all.

- Preemption: DefaultPreemption's own choice, already in the pod answers; summarised here.
- Defragmentation: for a pod refused only for want of whole GPUs, the nodes whose GPUs would
  suffice if some of their pods moved; the fewest pods (then the fewest GPUs) are moved, and a
  move counts only if the scheduler places every moved pod elsewhere, with the pod reserved on
  the freed node. Bare pods (no controller) and DaemonSet pods are never moved: nothing would
  recreate the one, the other belongs to its node.
- MIG repartition: :mod:`gpuplane.fit.mig_remedy`.
- Capacity: copies of each template (preemptionPolicy Never, so nothing is evicted) scheduled
  one after another until one does not fit, up to ``FitSettings.capacity_limit``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.fit.aligned_nodes import aligned_nodes
from gpuplane.fit.framework_view import FrameworkView, framework_view
from gpuplane.fit.gpu_answer import place_on_node
from gpuplane.fit.mig_remedy import mig_remedies
from gpuplane.fit.model import FitCluster, FitNode, FitPod
from gpuplane.fit.reasons import INSUFFICIENT_GPU
from gpuplane.fit.result import Capacity, Move, Outcome, PodAnswer, Remedy
from gpuplane.fit.workload import FitSettings, FitWorkload, WorkloadPod
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.framework.types import PREEMPT_NEVER, PodInfo

# Pods on one node considered for a move set; past it only the largest holders are.
MAX_MOVABLE = 12


def capacity(
    scheduler: Scheduler,
    cluster: FitCluster,
    view: FrameworkView,
    fw: FitWorkload,
    settings: FitSettings,
) -> tuple[Capacity, ...]:
    """Copies the scheduler places *and* their node's kubelet admits (a copy the kubelet would
    reject still holds its room for the copies after it, as in one scheduling pass)."""
    out = []
    nodes = {n.name: n for n in cluster.nodes}
    seen: dict[str, PodInfo] = {}
    for wp in fw.pods:
        seen.setdefault(wp.template, wp.info)
    for template, info in seen.items():
        limit = settings.capacity_limit
        clones = [
            replace(
                info,
                uid=f"{info.uid}-capacity-{i}",
                name=f"{info.name}-capacity-{i}",
                pod_group=None,
                group_created_s=None,
                preemption_policy=PREEMPT_NEVER,
                nominated_node=None,
            )
            for i in range(limit + 1)
        ]
        decision = scheduler.decide(view.snapshot, clones)
        by_uid = {c.uid: c for c in clones}
        placed = _admitted(view, nodes, [(by_uid[b.pod_uid], b.node) for b in decision.bindings])
        out.append(Capacity(template, min(placed, limit), placed > limit))
    return tuple(out)


def _admitted(
    view: FrameworkView, nodes: Mapping[str, FitNode], placed: Sequence[tuple[PodInfo, str]]
) -> int:
    """How many of the placed copies their node's kubelet admits, in placement order."""
    taken: dict[str, tuple[frozenset[int], frozenset[int]]] = {}
    count = 0
    for pod, name in placed:
        gpus, cpus = taken.get(name, (frozenset(), frozenset()))
        _, verdict, result = place_on_node(nodes[name], view.holdings[name], pod, gpus, cpus)
        if not verdict.admit:
            continue
        count += 1
        if result is not None:
            got = {g for a in result.allocations.values() for g in a.gpus}
            own = {c for a in result.allocations.values() for c in a.cpus}
            taken[name] = (gpus | got, cpus | own)
    return count


def _movable(pod: FitPod) -> bool:
    owner = pod.owner
    return owner is not None and owner.kind != "DaemonSet" and pod.gpus > 0


def _move_sets(pods: Sequence[FitPod], deficit: int) -> list[tuple[FitPod, ...]]:
    """Sets of pods whose GPUs cover ``deficit``: fewest pods first, then fewest GPUs."""
    cands = sorted((p for p in pods if _movable(p)), key=lambda p: (-p.gpus, p.info.key))
    cands = cands[:MAX_MOVABLE]
    sets: list[tuple[FitPod, ...]] = []
    for size in range(1, len(cands) + 1):
        found = [
            c for c in itertools.combinations(cands, size) if sum(p.gpus for p in c) >= deficit
        ]
        sets.extend(sorted(found, key=lambda c: (sum(p.gpus for p in c), [p.info.key for p in c])))
        if sets:
            break
    return sets[:4]


def _try_moves(
    scheduler: Scheduler,
    work: FitCluster,
    view: FrameworkView,
    node: str,
    pod: PodInfo,
    moved: tuple[FitPod, ...],
) -> tuple[tuple[Move, ...], FitCluster] | None:
    """The moves and the cluster after them, if every moved pod fits elsewhere once ``pod``
    holds ``node``."""
    gone = {p.info.uid for p in moved}
    placeholder = FitPod(pod, node, "Pending", work.now_s)
    kept = tuple(p for p in work.pods if p.info.uid not in gone)
    after = replace(work, pods=(*kept, placeholder))
    pending = [replace(p.info, nominated_node=None) for p in moved]
    snap = framework_view(after, view.holdings, {node}).snapshot
    decision = scheduler.decide(snap, pending)
    where = {b.pod_uid: b.node for b in decision.bindings}
    if len(where) < len(moved) or any(n == node for n in where.values()):
        return None
    moves = tuple(Move(p.info.key, node, where[p.info.uid]) for p in moved)
    landed = tuple(replace(p, node=where[p.info.uid], gpu_ids=None) for p in moved)
    return moves, replace(after, pods=(*after.pods, *landed))


def _gpu_only(answer: PodAnswer) -> list[str]:
    """Nodes that refused the pod for GPUs alone."""
    out: list[str] = []
    for group in answer.node_reasons:
        if all(r.endswith(INSUFFICIENT_GPU) for r in group.reasons):
            out.extend(group.all_nodes)
    return out


def _one_move(
    scheduler: Scheduler,
    work: FitCluster,
    view: FrameworkView,
    wp: WorkloadPod,
    candidates: Sequence[str],
    settings: FitSettings,
) -> tuple[tuple[Move, ...], FitCluster] | None:
    need = wp.info.requests.get(NVIDIA_GPU, 0)
    nodes = {n.name: n for n in work.nodes}
    ranked = []
    for name in candidates:
        free = nodes[name].gpus - len(view.holdings[name].taken_gpus)
        if nodes[name].gpus >= need > free:
            ranked.append((need - free, name))
    for deficit, name in sorted(ranked)[: settings.defrag_candidates]:
        for moved in _move_sets(view.pods_by_node.get(name, ()), deficit):
            found = _try_moves(scheduler, work, view, name, wp.info, moved)
            if found is not None:
                return found
    return None


def _defragment(
    scheduler: Scheduler,
    cluster: FitCluster,
    view: FrameworkView,
    pods: Sequence[WorkloadPod],
    answer: PodAnswer,
    settings: FitSettings,
) -> Remedy | None:
    """Moves that make room for the template's unplaced pods, one after another, each on the
    cluster the earlier moves left."""
    if not pods[0].info.requests.get(NVIDIA_GPU, 0):
        return None
    candidates = _gpu_only(answer)
    work, moves, fitted = cluster, list[Move](), 0
    for wp in pods:
        found = _one_move(scheduler, work, view, wp, candidates, settings)
        if found is None:
            break
        changed = {m.from_node for m in found[0]} | {m.to_node for m in found[0]}
        work = found[1]
        view = framework_view(work, view.holdings, changed)
        moves.extend(found[0])
        fitted += 1
    if not moves:
        return None
    where = sorted({m.from_node for m in moves})
    summary = (
        f"{pods[0].workload}: moving {len(moves)} pod(s) off {', '.join(where[:8])} makes room "
        f"for {fitted} of its {len(pods)} unplaced pod(s)"
    )
    return Remedy("defragment", summary, tuple(moves), tuple(m.pod for m in moves), fitted)


def _preemption_summary(answers: Sequence[PodAnswer]) -> Remedy | None:
    pre = [a for a in answers if a.preempt_node is not None]
    if not pre:
        return None
    victims = tuple(dict.fromkeys(v.pod for a in pre for v in a.victims))
    placed = sum(1 for a in pre if a.outcome is Outcome.FITS_AFTER_PREEMPTION)
    summary = (
        f"DefaultPreemption evicts {len(victims)} lower-priority pod(s) on "
        f"{len({a.preempt_node for a in pre})} node(s) for {len(pre)} pod(s)"
    )
    return Remedy("preemption", summary, (), victims, placed)


def remedies(
    scheduler: Scheduler,
    cluster: FitCluster,
    view: FrameworkView,
    fw: FitWorkload,
    unplaced: Sequence[WorkloadPod],
    answers: Mapping[str, PodAnswer],
    settings: FitSettings,
) -> tuple[Remedy, ...]:
    out: list[Remedy] = []
    pre = _preemption_summary([answers[wp.info.uid] for wp in unplaced])
    if pre is not None:
        out.append(pre)
    by_template: dict[str, list[WorkloadPod]] = {}
    for wp in unplaced:
        if answers[wp.info.uid].outcome is Outcome.UNSCHEDULABLE:
            by_template.setdefault(wp.template, []).append(wp)
    for pods in by_template.values():
        fix = _defragment(scheduler, cluster, view, pods, answers[pods[0].info.uid], settings)
        if fix is not None:
            out.append(fix)
    out.extend(mig_remedies(cluster, view, fw, unplaced, answers))
    out.extend(aligned_nodes(scheduler, cluster, view, unplaced, answers))
    return tuple(out)
