"""The cluster as the extender decides on it: nodes by name, the assumed GPU holding of each
(:mod:`gpuplane.fit.holdings`) and a key per node that says when two nodes are in the same
state for a pod (same hardware, GPU count, kubelet configuration and taken GPUs and CPUs), so a
verdict computed on one is reused for the other.

Built once per cluster change (from the previous view: only changed nodes are replayed); a
request with full Node objects gets a copy where only those nodes were replayed.
``with_assumed`` is the reference for the view with assumed pods (a copy with their nodes
replayed); the service keeps that view incrementally instead
(:mod:`gpuplane.fit.extender.overlay`, tested to agree with it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from gpuplane.fit.holdings import NodeHolding, ReplayCache, replay_node
from gpuplane.fit.model import FitCluster, FitNode, FitPod

NodeKey = tuple[object, ...]


def node_key(node: FitNode, holding: NodeHolding) -> NodeKey:
    topo = node.hardware.topology
    return (
        id(topo) if topo is not None else None,
        node.gpus,
        node.kubelet,
        holding.taken_gpus,
        holding.taken_cpus,
    )


@dataclass(frozen=True, slots=True)
class ExtenderView:
    nodes: Mapping[str, FitNode]
    holdings: Mapping[str, NodeHolding]
    pods_by_node: Mapping[str, tuple[FitPod, ...]]
    # The node's state as a small int (equal ints: equal ``node_key``s), so the per-call lookup
    # hashes an int, not a kubelet configuration; ``interned`` gives the ints, shared by the
    # views derived from one another (it only grows).
    keys: Mapping[str, int]
    bound_uids: frozenset[str]  # pods the cluster shows holding a node
    interned: dict[NodeKey, int]
    # The last replay of each node with extra pods (assumed ones): node name -> (the node, the
    # pods replayed, their holding, its key), reused while the node and the pods are the very
    # same objects. Shared by derived views like ``interned``; a burst of requests, each adding
    # one assumed pod, then replays one node per request instead of every assumed node.
    replays: dict[str, tuple[FitNode, tuple[FitPod, ...], NodeHolding, int]] = field(
        default_factory=dict
    )

    def __contains__(self, name: object) -> bool:
        return name in self.nodes


def make_view(cluster: FitCluster, previous: ExtenderView | None = None) -> ExtenderView:
    """The view of ``cluster``; with ``previous`` (the view of an earlier state of the same
    cluster), a node that is the very same value with the very same pods keeps its holding
    and key unreplayed, and the interned keys are shared (so verdicts cached by key stay
    valid). A watch event then costs one node's replay, not every node's."""
    by_node: dict[str, list[FitPod]] = {n.name: [] for n in cluster.nodes}
    for p in cluster.pods:
        if p.holds and p.node in by_node:
            by_node[p.node].append(p)
    cache: ReplayCache = {}
    interned: dict[NodeKey, int] = previous.interned if previous is not None else {}
    holdings: dict[str, NodeHolding] = {}
    keys: dict[str, int] = {}
    for n in cluster.nodes:
        pods = by_node[n.name]
        if previous is not None and _unchanged(previous, n, pods):
            holdings[n.name], keys[n.name] = previous.holdings[n.name], previous.keys[n.name]
            continue
        holdings[n.name] = replay_node(n, pods, cache)
        keys[n.name] = intern_key(interned, n, holdings[n.name])
    return ExtenderView(
        nodes={n.name: n for n in cluster.nodes},
        holdings=holdings,
        pods_by_node={k: tuple(v) for k, v in by_node.items()},
        keys=keys,
        bound_uids=frozenset(p.info.uid for p in cluster.pods if p.holds),
        interned=interned,
        replays=previous.replays if previous is not None else {},
    )


def _unchanged(previous: ExtenderView, node: FitNode, pods: Sequence[FitPod]) -> bool:
    if previous.nodes.get(node.name) is not node or node.name not in previous.holdings:
        return False
    before = previous.pods_by_node.get(node.name, ())
    return len(before) == len(pods) and all(a is b for a, b in zip(before, pods, strict=True))


def intern_key(interned: dict[NodeKey, int], node: FitNode, holding: NodeHolding) -> int:
    """The small int standing for ``node_key(node, holding)`` (a new one for a new state)."""
    return interned.setdefault(node_key(node, holding), len(interned))


def replay_with(
    view: ExtenderView, node: FitNode, pods: tuple[FitPod, ...], cache: ReplayCache
) -> tuple[NodeHolding, int]:
    """``node``'s holding and interned key with ``pods`` on it (its own and extra ones); the
    last such replay of the node is reused while the node and the pods are the very same."""
    last = view.replays.get(node.name)
    if last is not None and last[0] is node and _same(last[1], pods):
        return last[2], last[3]
    holding = replay_node(node, pods, cache)
    key = intern_key(view.interned, node, holding)
    view.replays[node.name] = (node, pods, holding, key)
    return holding, key


def _replayed(
    view: ExtenderView,
    nodes: Iterable[FitNode],
    extra: Mapping[str, Sequence[FitPod]],
) -> ExtenderView:
    new_nodes, holdings, keys = dict(view.nodes), dict(view.holdings), dict(view.keys)
    cache: ReplayCache = {}
    for node in nodes:
        pods = (*view.pods_by_node.get(node.name, ()), *extra.get(node.name, ()))
        new_nodes[node.name] = node
        holdings[node.name], keys[node.name] = replay_with(view, node, pods, cache)
    return ExtenderView(
        new_nodes,
        holdings,
        view.pods_by_node,
        keys,
        view.bound_uids,
        view.interned,
        view.replays,
    )


def _same(a: Sequence[FitPod], b: Sequence[FitPod]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def with_nodes(view: ExtenderView, nodes: Sequence[FitNode]) -> ExtenderView:
    """``view`` with ``nodes`` (the Node objects a request carried) in place of its own; nodes
    it already holds, the very same value, are not replayed."""
    changed = [n for n in nodes if view.nodes.get(n.name) is not n]
    return _replayed(view, changed, {}) if changed else view


def with_assumed(view: ExtenderView, assumed: Sequence[FitPod]) -> ExtenderView:
    """``view`` with ``assumed`` (pods bound to their ``node``) holding GPUs too."""
    extra: dict[str, list[FitPod]] = {}
    for p in assumed:
        if p.node is not None and p.node in view.nodes and p.info.uid not in view.bound_uids:
            extra.setdefault(p.node, []).append(p)
    if not extra:
        return view
    return _replayed(view, [view.nodes[n] for n in extra], extra)


def without_pods(view: ExtenderView, node: str, uids: frozenset[str]) -> ExtenderView:
    """``view`` with the pods ``uids`` gone from ``node`` (preemption's victims evicted)."""
    found = view.nodes.get(node)
    if found is None:
        return view
    pods = tuple(p for p in view.pods_by_node.get(node, ()) if p.info.uid not in uids)
    by_node = {**view.pods_by_node, node: pods}
    trimmed = ExtenderView(
        view.nodes, view.holdings, by_node, view.keys, view.bound_uids, view.interned, view.replays
    )
    return _replayed(trimmed, [found], {})
