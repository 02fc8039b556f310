"""The MIG controller's single-strategy round (``nvidia.com/mig.strategy=single``).

Pending pods asking ``nvidia.com/gpu`` for one profile (``ControlPod.single_profile``) are
served first by the free devices of nodes already holding that profile; the rest go, pod by
pod in key order, to nodes relabelled to mig-parted's ``all-<profile>`` (idle nodes first, a
relabelled node's devices taken by the next pods), under the safety rules of
:mod:`controller_rules`; what no change serves is returned unplaced.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from gpuplane.slicing.mig.controller_rules import blocker, previously_failed
from gpuplane.slicing.mig.controller_types import (
    FAILED_STATE,
    ControlNode,
    ControlPod,
    ControlSettings,
    ControlSnapshot,
    NodeChange,
    SkippedAction,
)
from gpuplane.slicing.mig.parted_defaults import default_configs
from gpuplane.slicing.mig.parted_naming import layouts_of
from gpuplane.slicing.mig.plan_types import GpuTarget
from gpuplane.slicing.mig.repartition import profile_name


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
        f"nvidia.com/gpu pods asking {found.name}"
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


def _served_now(
    nodes: list[ControlNode], pods_on: dict[str, list[ControlPod]], pending: list[ControlPod]
) -> tuple[list[ControlPod], set[str], dict[str, str | None]]:
    """The pending pods the current profiles' free devices do not serve, the nodes whose free
    devices serve some (not relabelled), and each node's current single profile."""
    free: dict[str, int] = {}
    current: dict[str, str | None] = {}
    for node in nodes:
        profile, count = _single_profile(node)
        current[node.name] = profile
        free[node.name] = count - sum(p.gpus for p in pods_on.get(node.name, []))
    unserved: list[ControlPod] = []
    kept: set[str] = set()
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
    return unserved, kept, current


@dataclass(slots=True)
class _SingleRelabels:
    """The relabels one single-strategy round makes, built pod by pending pod (mutable: the
    devices a relabelled node has left are taken by the next pods)."""

    nodes: list[ControlNode]
    pods_on: dict[str, list[ControlPod]]
    kept: set[str]  # nodes whose free devices serve pending pods: never relabelled
    current: dict[str, str | None]
    changes: list[NodeChange] = field(default_factory=list)
    skipped: list[SkippedAction] = field(default_factory=list)
    taken: dict[str, int] = field(default_factory=dict)  # relabelled node -> devices left

    def _busy(self, node: ControlNode) -> int:
        return sum(1 for p in self.pods_on.get(node.name, []) if p.holds_gpu)

    def on_a_relabelled_node(self, pod: ControlPod) -> bool:
        """Take devices a change already made in this round gives the pod's profile."""
        for change in self.changes:
            node = next(n for n in self.nodes if n.name == change.node)
            want = _single_key(node, pod)
            fits = want is not None and change.config == _all_name(node, want)
            if fits and self.taken[node.name] >= pod.gpus:
                self.taken[node.name] -= pod.gpus
                return True
        return False

    def _may_relabel(self, node: ControlNode, want: str | None) -> bool:
        refused = {s.node for s in self.skipped}
        return not (
            want is None
            or node.name in self.kept
            or node.name in self.taken
            or node.name in refused
            or want == self.current[node.name]
        )

    def relabel_for(
        self, pod: ControlPod, snap: ControlSnapshot, settings: ControlSettings
    ) -> bool:
        """Relabel one more node ``all-<profile>`` for the pod, idle nodes first, unless a
        safety rule refuses it (then the next node is tried)."""
        for node in sorted(self.nodes, key=lambda n: (self._busy(n), n.name)):
            want = _single_key(node, pod)
            if not self._may_relabel(node, want):
                continue
            assert want is not None
            evicts = [p for p in self.pods_on.get(node.name, []) if p.holds_gpu]
            made = _single_change(node, want, evicts)
            if made is None or made[1] < pod.gpus:
                continue
            change, count = made
            why = previously_failed(node, change.config) or blocker(node, evicts, snap, settings)
            if why is not None:
                self.skipped.append(why)
                continue
            self.changes.append(change)
            self.taken[node.name] = count - pod.gpus
            return True
        return False


def single_round(
    nodes: list[ControlNode],
    pods_on: dict[str, list[ControlPod]],
    pending: list[ControlPod],
    snap: ControlSnapshot,
    settings: ControlSettings,
) -> tuple[list[NodeChange], list[SkippedAction], dict[str, int]]:
    """Single strategy: pending pods the current profiles' free devices do not serve go to
    nodes relabelled ``all-<profile>``, idle nodes first; the rest is returned unplaced."""
    unserved, kept, current = _served_now(nodes, pods_on, pending)
    relabels = _SingleRelabels(nodes, pods_on, kept, current)
    unplaced: Counter[str] = Counter()
    for pod in unserved:
        if relabels.on_a_relabelled_node(pod) or relabels.relabel_for(pod, snap, settings):
            continue
        unplaced[pod.single_profile or ""] += pod.gpus
    return relabels.changes, relabels.skipped, dict(sorted(unplaced.items()))


def _all_name(node: ControlNode, profile: str) -> str | None:
    found = node.model.find_profile(profile)
    return None if found is None else f"all-{found.resource_suffix}"
