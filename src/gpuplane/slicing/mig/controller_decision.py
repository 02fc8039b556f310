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

A node whose state is ``failed`` serves nothing to the planner (what its GPUs hold is unknown);
a change that would set the config that failed again is skipped (``previously-failed``).

Single strategy (``nvidia.com/mig.strategy=single``): pending pods asking ``nvidia.com/gpu`` for
one profile (``ControlPod.single_profile``) are served first by the free devices of nodes already
holding that profile, then by relabelling another single-strategy node to mig-parted's
``all-<profile>``, idle nodes first, under the same safety rules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from gpuplane.api.resources import NVIDIA_GPU
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
from gpuplane.slicing.mig.parted_defaults import default_configs
from gpuplane.slicing.mig.parted_naming import layouts_of, named_node_config
from gpuplane.slicing.mig.plan_types import GpuTarget, MigPlanSettings
from gpuplane.slicing.mig.repartition import NodeGpu, NodesPlan, plan_nodes, profile_name


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


def _previously_failed(node: ControlNode, config: str) -> SkippedAction | None:
    if node.state != FAILED_STATE or node.config != config:
        return None
    return SkippedAction(
        node.name,
        SkipReason.PREVIOUSLY_FAILED,
        f"mig.config.state is failed: the MIG manager could not apply {config}, the config "
        "the plan would set again; not relabelled (fix the node, or relabel it by hand)",
    )


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
            change = _change(node, targets, evicts)
            why = _previously_failed(node, change.config) or _blocker(node, evicts, snap, settings)
            if why is not None:
                skipped.append(why)
                blocked = True
            else:
                changes.append(change)
        if not blocked:
            return planned, changes, skipped
        gone = {s.node for s in skipped}
        candidates = [n for n in candidates if n.name not in gone]


def _single_profile(node: ControlNode) -> tuple[str | None, int]:
    """The one profile a single-strategy node's GPUs hold and how many instances (None, 0 when
    they are empty, mixed, unknown or the last config failed)."""
    if node.state == FAILED_STATE or not node.layouts_known:
        return None, 0
    profiles = {i.profile for layout in node.layouts for i in layout.instances}
    if len(profiles) != 1 or any(not layout.instances for layout in node.layouts):
        return None, 0
    return profiles.pop(), sum(len(layout.instances) for layout in node.layouts)


def _single_key(node: ControlNode, pod: ControlPod) -> str | None:
    """The node's name for the profile the pending pod asks, when the node may serve it."""
    if pod.single_profile is None:
        return None
    if pod.single_product and node.product and pod.single_product != node.product:
        return None
    return profile_name(pod.single_profile, {p.name for p in node.model.profiles})


def _single_change(
    node: ControlNode, profile: str, evicts: list[ControlPod]
) -> tuple[NodeChange, int] | None:
    """Relabel ``node`` to mig-parted's ``all-<profile>``; the change and its instance count."""
    found = node.model.find_profile(profile)
    if found is None:
        return None
    name = f"all-{found.resource_suffix}"
    defaults = default_configs(node.model)
    layouts = layouts_of(defaults, name, node.model, len(node.layouts))
    if layouts is None:
        return None
    targets = tuple(
        (
            g,
            GpuTarget(
                index=g,
                model=node.model.name,
                current=node.layouts[g],
                layout=new,
                serves=tuple(sorted(new.counts().items())),
                kept=(),
                evicted=node.layouts[g].instances if evicts else (),
                used=bool(evicts),
                reconfigured=True,
                rebuilt=True,
            ),
        )
        for g, new in enumerate(layouts)
    )
    message = (
        f"mig.config {node.config or '(none)'} -> {name} (single strategy) for pending "
        f"{NVIDIA_GPU} pods asking {found.name}"
    )
    if evicts:
        message += f"; disrupts {', '.join(p.key for p in evicts)}"
    change = NodeChange(
        node=node.name,
        config=name,
        previous=node.config,
        entries=defaults.get(name),
        model=node.model,
        targets=targets,
        evicts=tuple(p.key for p in evicts),
        message=message,
    )
    return change, sum(len(layout.instances) for layout in layouts)


def _single_round(
    nodes: list[ControlNode],
    pods_on: dict[str, list[ControlPod]],
    pending: list[ControlPod],
    snap: ControlSnapshot,
    settings: ControlSettings,
) -> tuple[list[NodeChange], list[SkippedAction], dict[str, int]]:
    """Single strategy: pending pods the current profiles' free devices do not serve go to
    nodes relabelled ``all-<profile>``, idle nodes first; the rest is returned unplaced."""
    free: dict[str, int] = {}
    current: dict[str, str | None] = {}
    for node in nodes:
        profile, count = _single_profile(node)
        current[node.name] = profile
        free[node.name] = count - sum(p.gpus for p in pods_on.get(node.name, []))
    unserved: list[ControlPod] = []
    kept: set[str] = set()  # nodes whose free devices serve pending pods: not relabelled
    for pod in sorted(pending, key=lambda p: p.key):
        home = next(
            (
                n
                for n in nodes
                if current[n.name] is not None
                and _single_key(n, pod) == current[n.name]
                and free[n.name] >= pod.gpus
            ),
            None,
        )
        if home is None:
            unserved.append(pod)
        else:
            free[home.name] -= pod.gpus
            kept.add(home.name)
    changes: list[NodeChange] = []
    skipped: list[SkippedAction] = []
    unplaced: Counter[str] = Counter()
    taken: dict[str, int] = {}  # relabelled node -> devices left for more pending pods

    def busy(n: ControlNode) -> int:
        return sum(1 for p in pods_on.get(n.name, []) if p.holds_gpu)

    for pod in unserved:
        placed = False
        for change in changes:
            node = next(n for n in nodes if n.name == change.node)
            want = _single_key(node, pod)
            fits = want is not None and change.config == _all_name(node, want)
            if fits and taken[node.name] >= pod.gpus:
                taken[node.name] -= pod.gpus
                placed = True
                break
        if placed:
            continue
        refused = {s.node for s in skipped}
        for node in sorted(nodes, key=lambda n: (busy(n), n.name)):
            want = _single_key(node, pod)
            if (
                want is None
                or node.name in kept
                or node.name in taken
                or node.name in refused
                or want == current[node.name]
            ):
                continue
            evicts = [p for p in pods_on.get(node.name, []) if p.holds_gpu]
            made = _single_change(node, want, evicts)
            if made is None or made[1] < pod.gpus:
                continue
            change, count = made
            why = _previously_failed(node, change.config) or _blocker(node, evicts, snap, settings)
            if why is not None:
                skipped.append(why)
                refused.add(node.name)
                continue
            changes.append(change)
            taken[node.name] = count - pod.gpus
            placed = True
            break
        if not placed:
            unplaced[pod.single_profile or ""] += pod.gpus
    return changes, skipped, dict(sorted(unplaced.items()))


def _all_name(node: ControlNode, profile: str) -> str | None:
    found = node.model.find_profile(profile)
    return None if found is None else f"all-{found.resource_suffix}"


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
        more, refused, single_unplaced = _single_round(
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
