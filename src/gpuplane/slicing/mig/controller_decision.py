"""The live MIG repartitioning controller's decision: ``decide(ControlSnapshot, ControlSettings)``.

Pure. The demand is what pending pods ask as ``nvidia.com/mig-<profile>`` (mixed strategy). Each
round:

1. Nodes whose ``nvidia.com/mig.config.state`` is ``pending`` or ``rebooting`` are never touched
   (NVIDIA's MIG manager is at work there) and count against ``max_unavailable``; cordoned nodes
   are left alone.
2. Every other MIG node's GPUs go to the planner (the step the twin's controller takes too,
   :func:`gpuplane.slicing.mig.repartition.plan_nodes`) in ``mig-parted`` mode, because the MIG
   manager applies a config with mig-parted: a changed GPU is cleared and rebuilt.
3. The API does not say which GPU a bound pod's instance is on. The pods' instances are taken to
   sit on the lowest-numbered instances of their profile (so the planner knows how much of the
   node is used), but a node with *any* GPU reconfigured is taken to disrupt *every* GPU pod on
   it, as ``gpuplane fit``'s MIG remedy lists them. The planner may propose such a node (its
   objectives prefer fewer disruptions); it is only changed with
   ``allow_evict`` and when every PodDisruptionBudget covering those pods allows that many
   disruptions; otherwise it is skipped with the reason and the plan is made again without it.
4. The changes left are taken fewest disruptions first, then by node name, while fewer than
   ``max_unavailable`` nodes are changing; the rest are skipped (``max-unavailable``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from gpuplane.slicing.mig.controller_types import (
    IN_PROGRESS_STATES,
    ControlNode,
    ControlPod,
    ControlSettings,
    ControlSnapshot,
    MigControllerDecision,
    NodeChange,
    SkippedAction,
    SkipReason,
)
from gpuplane.slicing.mig.layout import Instance, Layout
from gpuplane.slicing.mig.parted_naming import named_node_config
from gpuplane.slicing.mig.plan_types import GpuTarget, MigPlanSettings
from gpuplane.slicing.mig.repartition import NodeGpu, NodesPlan, plan_nodes


def pending_demand(pods: Sequence[ControlPod]) -> dict[str, int]:
    demand: Counter[str] = Counter()
    for pod in pods:
        if pod.node is None:
            demand.update(dict(pod.mig))
    return dict(sorted((k, v) for k, v in demand.items() if v))


def _guessed_in_use(node: ControlNode, pods: Sequence[ControlPod]) -> list[set[Instance]]:
    """The instances the node's pods hold, guessed: lowest GPU, then lowest start, first."""
    wanted: Counter[str] = Counter()
    for pod in pods:
        wanted.update(dict(pod.mig))
    out: list[set[Instance]] = [set() for _ in node.layouts]
    for g, layout in enumerate(node.layouts):
        for inst in layout.instances:
            name = node.model.find_profile(inst.profile)
            key = name.name if name is not None else inst.profile
            suffix = key.replace("+", ".")
            for k in (key, suffix):
                if wanted[k] > 0:
                    wanted[k] -= 1
                    out[g].add(inst)
                    break
    return out


def _gpus(nodes: Sequence[ControlNode], pods_on: dict[str, list[ControlPod]]) -> list[NodeGpu]:
    out: list[NodeGpu] = []
    for node in nodes:
        held = _guessed_in_use(node, pods_on.get(node.name, []))
        for g, layout in enumerate(node.layouts):
            out.append(NodeGpu(node.name, g, node.model, layout, frozenset(held[g])))
    return out


def _blocker(
    node: ControlNode, evicts: list[ControlPod], snap: ControlSnapshot, settings: ControlSettings
) -> SkippedAction | None:
    if not evicts:
        return None
    keys = tuple(p.key for p in evicts)
    if not settings.allow_evict:
        return SkippedAction(
            node.name,
            SkipReason.WOULD_EVICT,
            f"reconfiguring {node.name} would disrupt {len(keys)} running GPU pod(s) "
            f"({', '.join(keys)}); pass --allow-evict to allow it",
            keys,
        )
    for budget in snap.budgets:
        covered = [p.key for p in evicts if budget.covers(p)]
        if len(covered) > budget.disruptions_allowed:
            return SkippedAction(
                node.name,
                SkipReason.PDB,
                f"PodDisruptionBudget {budget.key} allows {budget.disruptions_allowed} "
                f"disruption(s); reconfiguring {node.name} would disrupt {len(covered)} "
                f"({', '.join(covered)})",
                keys,
            )
    return None


def _change(
    node: ControlNode, targets: tuple[tuple[int, GpuTarget], ...], evicts: list[ControlPod]
) -> NodeChange:
    layouts: list[Layout] = list(node.layouts)
    for g, target in targets:
        layouts[g] = target.layout
    name, entries = named_node_config(node.model, layouts)
    steps = "; ".join(
        f"GPU {g}: {t.current.describe()} -> {t.layout.describe()}" for g, t in targets
    )
    message = f"mig.config {node.config or '(none)'} -> {name} for pending MIG pods: {steps}"
    if evicts:
        message += f"; disrupts {', '.join(p.key for p in evicts)}"
    return NodeChange(
        node=node.name,
        config=name,
        previous=node.config,
        entries=entries,
        model=node.model,
        targets=targets,
        evicts=tuple(p.key for p in evicts),
        message=message,
    )


def _plan_round(
    candidates: list[ControlNode],
    pods_on: dict[str, list[ControlPod]],
    demand: dict[str, int],
    snap: ControlSnapshot,
    settings: ControlSettings,
) -> tuple[NodesPlan | None, list[NodeChange], list[SkippedAction]]:
    """Plan, drop the nodes a safety rule blocks, plan again until no change is blocked."""
    # The planner may always propose disrupting a node (it prefers not to: fewest evictions is
    # one of its objectives); the safety rules then refuse the change with a reason the user
    # sees, and the node is planned without.
    plan_settings = MigPlanSettings(
        allow_evict=True,
        apply_mode="mig-parted",
        time_limit_s=settings.time_limit_s,
    )
    skipped: list[SkippedAction] = []
    by_name = {n.name: n for n in candidates}
    while True:
        planned = plan_nodes(_gpus(candidates, pods_on), demand, plan_settings)
        if planned is None:
            return None, [], skipped
        changes: list[NodeChange] = []
        blocked = False
        for name, targets in planned.changes:
            node = by_name[name]
            evicts = [p for p in pods_on.get(name, []) if p.holds_gpu]
            why = _blocker(node, evicts, snap, settings)
            if why is not None:
                skipped.append(why)
                blocked = True
            else:
                changes.append(_change(node, targets, evicts))
        if not blocked:
            return planned, changes, skipped
        gone = {s.node for s in skipped}
        candidates = [n for n in candidates if n.name not in gone]


def decide(snap: ControlSnapshot, settings: ControlSettings) -> MigControllerDecision:
    skipped: list[SkippedAction] = []
    busy = [n for n in snap.nodes if n.state in IN_PROGRESS_STATES]
    for node in busy:
        skipped.append(
            SkippedAction(
                node.name,
                SkipReason.IN_PROGRESS,
                f"mig.config.state is {node.state}: the MIG manager is applying "
                f"{node.config or '(none)'}; not relabelled",
            )
        )
    demand = pending_demand(snap.pods)
    if not demand:
        return MigControllerDecision((), tuple(skipped), ())
    candidates = [n for n in snap.nodes if n.state not in IN_PROGRESS_STATES and n.schedulable]
    pods_on: dict[str, list[ControlPod]] = {}
    for pod in snap.pods:
        if pod.node is not None:
            pods_on.setdefault(pod.node, []).append(pod)
    planned, changes, blocked = _plan_round(candidates, pods_on, demand, snap, settings)
    skipped.extend(blocked)
    room = max(0, settings.max_unavailable - len(busy))
    accepted: list[NodeChange] = []
    for change in sorted(changes, key=lambda c: (len(c.evicts), c.node)):
        if len(accepted) < room:
            accepted.append(change)
            continue
        skipped.append(
            SkippedAction(
                change.node,
                SkipReason.MAX_UNAVAILABLE,
                f"{len(busy) + len(accepted)} node(s) already reconfiguring "
                f"(max-unavailable {settings.max_unavailable}); {change.node} waits: "
                f"{change.message}",
                change.evicts,
            )
        )
    return MigControllerDecision(
        changes=tuple(sorted(accepted, key=lambda c: c.node)),
        skipped=tuple(skipped),
        demand=tuple(demand.items()),
        unplaced=tuple(sorted((k, v) for k, v in planned.plan.unplaced.items() if v))
        if planned is not None
        else tuple(demand.items()),
        plan_status=planned.plan.status if planned is not None else "no MIG GPU serves it",
    )
