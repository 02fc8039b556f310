"""``AssumedOverlay``: the extender's view with its assumed pods, kept up to date in place.

``view.with_assumed`` (the reference; tests check they agree) copies the view's maps and looks
at every assumed pod on every call. Under a burst of pending pods each call assumes one more
pod, so that copy and walk grow with the burst. The overlay instead owns one pair of maps
(holding and interned key by node name), copied from the base view only when the base changes
(a cluster load, or a full-form request whose Node objects differ), and on each call replays
just the nodes whose assumptions changed since the last call
(``AssumedPods.take_dirty``); a node left with no assumed pod gets the base's values back.

Most changes in a burst add one pod to a node, the pod the extender has just judged there:
its verdict (``NodeEval.placed``) already holds the GPUs and CPUs the kubelet's admission gave
it on the node as it stands, which is what a replay would give it too (assumed pods are
replayed last, in the order assumed: ``assumed.ASSUMED_START_S``). Given that verdict
(``hint``), the node's holding is the old one plus the pod: no replay. Any other change (a pod
dropped or expired, a base that moved, no verdict) replays the node.

The view it returns shares those maps: it is valid until the next ``view`` call, which is how
the service uses it (one call at a time, on one worker).
"""

from __future__ import annotations

from gpuplane.fit.extender.assumed import AssumedPods
from gpuplane.fit.extender.node_eval import NodeEval
from gpuplane.fit.extender.view import ExtenderView, intern_key, replay_with
from gpuplane.fit.holdings import NodeHolding, ReplayCache
from gpuplane.fit.model import FitPod

MAX_REPLAYS = 10_000


class AssumedOverlay:
    """A mutable owner (one per extender state)."""

    def __init__(self) -> None:
        self._base: ExtenderView | None = None
        self._view: ExtenderView | None = None
        self._holdings: dict[str, NodeHolding] = {}
        self._keys: dict[str, int] = {}
        self._applied: dict[str, tuple[FitPod, ...]] = {}  # node -> its assumed pods applied
        # pod uid -> (node, the node's key when judged, the verdict), from ``hint``
        self._hints: dict[str, tuple[str, int, NodeEval]] = {}
        # Replays by (hardware, kubelet configuration, pod shapes), kept across calls: in a
        # burst most nodes share hardware and bound pods, so the kubelet's admission of "two
        # bound pods plus one more of 2 GPUs" is worked out once, not once per node.
        self._replays: ReplayCache = {}
        self._interned: object = None

    def view(self, base: ExtenderView, assumed: AssumedPods) -> ExtenderView:
        """``base`` with the pods of ``assumed`` holding GPUs too (as ``with_assumed``)."""
        dirty = assumed.take_dirty()
        if base is not self._base or self._view is None:
            self._rebase(base)
            dirty.update(assumed.nodes())
        if len(self._replays) > MAX_REPLAYS:
            self._replays.clear()
        for node in dirty:
            self._apply(base, node, assumed.on_node(node), self._replays)
        self._hints.clear()
        assert self._view is not None
        return self._view

    def hint(self, uid: str, node: str, ev: NodeEval) -> None:
        """The pod ``uid`` was judged ``ev`` on ``node`` in the view last returned, and is
        about to be assumed there."""
        key = self._keys.get(node)
        if key is not None and ev.placed is not None:
            self._hints[uid] = (node, key, ev)

    def _rebase(self, base: ExtenderView) -> None:
        if base.interned is not self._interned:
            # A view started afresh: the cache's hardware ids may name other objects now.
            self._replays.clear()
            self._interned = base.interned
        self._base = base
        self._holdings, self._keys = dict(base.holdings), dict(base.keys)
        self._applied = {}
        self._view = ExtenderView(
            base.nodes,
            self._holdings,
            base.pods_by_node,
            self._keys,
            base.bound_uids,
            base.interned,
            base.replays,
        )

    def _apply(
        self, base: ExtenderView, name: str, extra: tuple[FitPod, ...], cache: ReplayCache
    ) -> None:
        node = base.nodes.get(name)
        if node is None:
            return  # a node gone from the cluster: nothing to hold GPUs on
        extra = tuple(p for p in extra if p.info.uid not in base.bound_uids)
        if not extra:
            if self._applied.pop(name, None) is not None:
                self._holdings[name], self._keys[name] = base.holdings[name], base.keys[name]
            return
        added = self._added(name, extra)
        if added is not None:
            self._holdings[name] = added
            self._keys[name] = intern_key(base.interned, node, added)
        else:
            pods = (*base.pods_by_node.get(name, ()), *extra)
            self._holdings[name], self._keys[name] = replay_with(base, node, pods, cache)
        self._applied[name] = extra

    def _added(self, name: str, extra: tuple[FitPod, ...]) -> NodeHolding | None:
        """The node's holding with ``extra[-1]`` added to what is applied, when that pod is
        the only change and its verdict on the node as it stands is known."""
        before, pod = self._applied.get(name, ()), extra[-1]
        hint = self._hints.get(pod.info.uid)
        if hint is None or hint[0] != name or hint[1] != self._keys[name]:
            return None
        if len(before) != len(extra) - 1 or any(
            a is not b for a, b in zip(before, extra[:-1], strict=True)
        ):
            return None
        assert hint[2].placed is not None
        gpus, cpus = hint[2].placed
        h = self._holdings[name]
        uid = pod.info.uid
        return NodeHolding(
            h.node,
            {**h.gpus_by_pod, uid: gpus} if gpus else h.gpus_by_pod,
            {**h.cpus_by_pod, uid: cpus} if cpus else h.cpus_by_pod,
            h.unknown_gpus + (pod.gpus if pod.gpu_ids is None else 0),
            h.known,
            h.replay_misses,
        )
