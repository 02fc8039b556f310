"""The MIG repartitioning controller's decision: ``decide(ControlSnapshot, ControlSettings)``.

One decision for the live service and the twin: both call it through the round in
:mod:`controller_loop`.

Pure. The demand is what pending pods ask as ``nvidia.com/mig-<profile>`` (mixed strategy). Each
round:

1. Nodes whose ``nvidia.com/mig.config.state`` is ``pending`` or ``rebooting`` are never touched
   (NVIDIA's MIG manager is at work there) and count against ``max_unavailable``; cordoned nodes
   are left alone.
2. Every other MIG node's GPUs go to the planner
   (:func:`gpuplane.slicing.mig.repartition.plan_nodes`) in ``mig-parted`` mode, because the MIG
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

A node whose state is ``failed`` serves nothing to the planner (what its GPUs hold is unknown);
a change that would set the config that failed again is skipped (``previously-failed``).

Single strategy (``nvidia.com/mig.strategy=single``): pending pods asking ``nvidia.com/gpu`` for
one profile (``ControlPod.single_profile``) are served first by the free devices of nodes already
holding that profile, then by relabelling another single-strategy node to mig-parted's
``all-<profile>``, idle nodes first, under the same safety rules (:mod:`controller_single`;
the rules themselves are :mod:`controller_rules`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from gpuplane.slicing.mig.controller_rules import blocker, previously_failed
from gpuplane.slicing.mig.controller_single import single_round
from gpuplane.slicing.mig.controller_types import (
    FAILED_STATE,
    IN_PROGRESS_STATES,
    SINGLE_STRATEGY,
    ControlNode,
    ControlPod,
    ControlSettings,
    ControlSnapshot,
    MigControllerDecision,
    NodeChange,
    SkippedAction,
    SkipReason,
)
from gpuplane.slicing.mig.layout import EMPTY_LAYOUT, Instance, Layout
from gpuplane.slicing.mig.parted_naming import named_node_config
from gpuplane.slicing.mig.plan_types import GpuTarget, MigPlanSettings
from gpuplane.slicing.mig.repartition import NodeGpu, NodesPlan, plan_nodes


def pending_demand(pods: Sequence[ControlPod]) -> dict[str, int]:
    demand: Counter[str] = Counter()
    for pod in pods:
        if pod.node is None and pod.single_profile is None:
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
        if node.state == FAILED_STATE:
            # The config the label names failed to apply: what the GPUs hold is not known, so
            # they serve nothing until a config applies (the planner must rebuild them).
            for g in range(len(node.layouts)):
                out.append(NodeGpu(node.name, g, node.model, EMPTY_LAYOUT))
            continue
        held = _guessed_in_use(node, pods_on.get(node.name, []))
        for g, layout in enumerate(node.layouts):
            out.append(NodeGpu(node.name, g, node.model, layout, frozenset(held[g])))
    return out


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
            change = _change(node, targets, evicts)
            why = previously_failed(node, change.config) or blocker(node, evicts, snap, settings)
            if why is not None:
                skipped.append(why)
                blocked = True
            else:
                changes.append(change)
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
    single_pending = [
        p for p in snap.pods if p.node is None and p.single_profile is not None and p.gpus > 0
    ]
    single_demand: Counter[str] = Counter()
    for pod in single_pending:
        single_demand[pod.single_profile or ""] += pod.gpus
    if not demand and not single_pending:
        return MigControllerDecision((), tuple(skipped), ())
    candidates = [n for n in snap.nodes if n.state not in IN_PROGRESS_STATES and n.schedulable]
    pods_on: dict[str, list[ControlPod]] = {}
    for pod in snap.pods:
        if pod.node is not None:
            pods_on.setdefault(pod.node, []).append(pod)
    mixed = [n for n in candidates if n.strategy != SINGLE_STRATEGY]
    single = [n for n in candidates if n.strategy == SINGLE_STRATEGY]
    planned: NodesPlan | None = None
    changes: list[NodeChange] = []
    if demand:
        planned, changes, blocked = _plan_round(mixed, pods_on, demand, snap, settings)
        skipped.extend(blocked)
    single_unplaced: dict[str, int] = {}
    if single_pending:
        more, refused, single_unplaced = single_round(
            single, pods_on, single_pending, snap, settings
        )
        changes.extend(more)
        skipped.extend(refused)
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
    if not demand:
        unplaced: tuple[tuple[str, int], ...] = ()
        status = "no demand"
    elif planned is not None:
        unplaced = tuple(sorted((k, v) for k, v in planned.plan.unplaced.items() if v))
        status = planned.plan.status
    else:
        unplaced, status = tuple(demand.items()), "no MIG GPU serves it"
    return MigControllerDecision(
        changes=tuple(sorted(accepted, key=lambda c: c.node)),
        skipped=tuple(skipped),
        demand=tuple(demand.items()),
        unplaced=unplaced,
        plan_status=status,
        single_demand=tuple(sorted(single_demand.items())),
        single_unplaced=tuple(single_unplaced.items()),
    )
