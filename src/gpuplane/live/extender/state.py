"""``ExtenderState``: what the extender answers from, and the four verbs on it.

It owns the cluster (replaced by ``load``: a snapshot, a relist, or the informers' store after
watch events), the view built from it (from the previous view: only the nodes whose object or
pods changed are replayed), the Node objects full-form requests carried (kept by name and
resourceVersion, so an unchanged node is not read again), the assumed pods and the verdict
cache. Every verb takes the
time from the caller. Not thread-safe: the service calls it from one worker.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuplane.core.errors import InputError
from gpuplane.fit.extender.assumed import AssumedPods
from gpuplane.fit.extender.decide import FilterDecision, filter_nodes
from gpuplane.fit.extender.fast_scores import Scores, score_names
from gpuplane.fit.extender.needs import GpuNeeds
from gpuplane.fit.extender.node_eval import NodeEval, pod_key
from gpuplane.fit.extender.overlay import AssumedOverlay
from gpuplane.fit.extender.preempt import preempt_nodes
from gpuplane.fit.extender.settings import ExtenderSettings
from gpuplane.fit.extender.view import ExtenderView, make_view, with_assumed, with_nodes
from gpuplane.fit.model import FitCluster, FitNode
from gpuplane.k8s.cluster.fit_cluster import fit_node
from gpuplane.k8s.cluster.fit_pools import NodeDefaults
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot
from gpuplane.live.extender.request_pod import SOURCE, request_pod
from gpuplane.live.extender.wire import (
    BindingArgs,
    ExtenderArgs,
    PreemptionArgs,
    Victims,
    WireError,
)
from gpuplane.live.extender.wire_nodes import WireNode
from gpuplane.scheduler.framework.types import PodInfo

MAX_CACHED_POD_SHAPES = 1_000
MAX_RECENT_PODS = 10_000
MAX_INTERNED = 50_000  # distinct node states before a load starts the view afresh


class NotReady(Exception):
    """No cluster loaded yet."""


class ExtenderState:
    def __init__(
        self,
        settings: ExtenderSettings,
        defaults: NodeDefaults | None = None,
        *,
        reference: bool = False,
    ) -> None:
        """``reference``: build the view with assumed pods by the simple reference path
        (``with_assumed``: a copy, every assumed node replayed) on every call, instead of the
        overlay kept in place; for the tests and the benchmark's side-by-side baseline."""
        self.settings = settings
        self.reference = reference
        self.defaults = defaults or NodeDefaults()
        self.assumed = AssumedPods(settings.assume_ttl_s)
        self._overlay = AssumedOverlay()
        self._cluster: FitCluster | None = None
        self._view: ExtenderView | None = None
        self._sent: dict[str, tuple[str, FitNode]] = {}  # name -> (resourceVersion, node)
        self._cache: dict[tuple[object, ...], dict[int, NodeEval]] = {}
        # pods of recent requests (with their declared needs), for bind
        self._recent: dict[str, tuple[PodInfo, GpuNeeds]] = {}
        self._alive: dict[int, object] = {}  # id -> topology, see load

    @property
    def ready(self) -> bool:
        return self._view is not None

    @property
    def num_nodes(self) -> int:
        return 0 if self._cluster is None else len(self._cluster.nodes)

    def load(self, cluster: FitCluster, versions: Mapping[str, str] | None = None) -> None:
        """Answer from ``cluster`` from now on; ``versions`` (node name -> resourceVersion of
        the objects it was read from) lets full-form requests reuse its nodes unread.

        The view is made from the previous one (unchanged nodes keep their holding and key)
        and the verdict cache, keyed by interned node state, is kept, until the interned keys
        pass ``MAX_INTERNED``: then everything is rebuilt."""
        previous = self._view
        if previous is not None and len(previous.interned) > MAX_INTERNED:
            previous = None
        if previous is None:
            self._cache.clear()
            self._alive.clear()
        view = make_view(cluster, previous)
        # node_key holds id(topology): keep each topology alive while a key may name it, so
        # no later object can reuse its id and be taken for it.
        for node in cluster.nodes:
            topo = node.hardware.topology
            if topo is not None:
                self._alive.setdefault(id(topo), topo)
        self._cluster, self._view = cluster, view
        self.assumed.drop_bound(view.bound_uids)
        self._sent = {
            name: (version, view.nodes[name])
            for name, version in (versions or {}).items()
            if name in view.nodes and version
        }

    def _base(self) -> tuple[FitCluster, ExtenderView]:
        if self._cluster is None or self._view is None:
            raise NotReady("the extender has not read the cluster yet")
        return self._cluster, self._view

    def _node(self, sent: WireNode, index: int) -> FitNode:
        held = self._sent.get(sent.name)
        if held is not None and sent.version and held[0] == sent.version:
            return held[1]
        try:
            node = fit_node(sent.obj(), index, SOURCE, self.defaults)
        except InputError as exc:
            raise WireError(f"Nodes.items[{index}] cannot be read: {exc}") from None
        self._sent[sent.name] = (sent.version, node)
        return node

    def _prepare(self, args: ExtenderArgs, now_s: float) -> tuple[ExtenderView, PodInfo, GpuNeeds]:
        cluster, view = self._base()
        pod, needs = request_pod(args.pod, cluster.priority_classes, cluster.default_priority)
        self.assumed.forget(pod.uid)  # scheduled again: not bound
        if len(self._recent) >= MAX_RECENT_PODS:
            self._recent.clear()
        self._recent[pod.uid] = (pod, needs)
        if args.node_names is None and args.nodes is not None:
            # The scheduler's Node objects are newer than the extender's: they replace its own.
            view = with_nodes(view, [self._node(n, i) for i, n in enumerate(args.nodes)])
            self._view = view
        view = self._assumed_view(view, now_s)
        if len(self._cache) > MAX_CACHED_POD_SHAPES:
            self._cache.clear()
        return view, pod, needs

    def _assumed_view(self, base: ExtenderView, now_s: float) -> ExtenderView:
        if self.reference:
            return with_assumed(base, self.assumed.active(now_s, base.bound_uids))
        self.assumed.expire(now_s)
        return self._overlay.view(base, self.assumed)

    def filter(self, args: ExtenderArgs, now_s: float) -> FilterDecision:
        view, pod, needs = self._prepare(args, now_s)
        decision = filter_nodes(view, pod, needs, args.names, self._cache)
        if len(decision.kept) == 1:
            self._assume(view, pod, needs, decision.kept[0], now_s, "filter")
        return decision

    def prioritize(self, args: ExtenderArgs, now_s: float) -> Scores:
        view, pod, needs = self._prepare(args, now_s)
        scores = score_names(view, pod, needs, args.names, self.settings, self._cache)
        chosen = scores.top()
        if chosen is not None:
            self._assume(view, pod, needs, chosen, now_s, "prioritize")
        return scores

    def _assume(
        self, view: ExtenderView, pod: PodInfo, needs: GpuNeeds, node: str, now_s: float, why: str
    ) -> None:
        """Assume ``pod`` on ``node``, handing the overlay the verdict just computed there (so
        the node's holding grows by the pod without a replay)."""
        self.assumed.assume(pod, node, now_s, why)
        if self.reference:
            return
        ev = self._cache.get(pod_key(pod, needs), {}).get(view.keys.get(node, -1))
        if ev is not None:
            self._overlay.hint(pod.uid, node, ev)

    def preempt(self, args: PreemptionArgs, now_s: float) -> dict[str, Victims]:
        cluster, view = self._base()
        pod, needs = request_pod(args.pod, cluster.priority_classes, cluster.default_priority)
        view = self._assumed_view(view, now_s)
        uids = {node: frozenset(v.uids) for node, v in args.victims.items()}
        kept = preempt_nodes(view, pod, needs, uids)
        return {node: args.victims[node] for node in kept}

    def bind_check(self, args: BindingArgs, now_s: float) -> str:
        """Before binding: "" when ``args.node`` still fits the pod in the extender's view (the
        pods assumed elsewhere hold their GPUs; the pod's own assumption is dropped first),
        else the reason to answer in the binding result's ``Error``.

        The pod must have been seen in a filter or prioritize call (the binding arguments
        carry only its name): kube-scheduler filters every pod it binds through an extender
        that filters, so an unseen pod means the extender restarted in between, and the
        answer makes kube-scheduler try the pod again. A pod the view shows bound is left to
        the API server, whose refusal names the node it is on."""
        _, view = self._base()
        who = f"{args.pod_namespace}/{args.pod_name}"
        if args.pod_uid in view.bound_uids:
            return ""
        seen = self._recent.get(args.pod_uid)
        if seen is None:
            return (
                f"gpuplane has not seen pod {who} (uid {args.pod_uid}) in a filter or "
                f'prioritize call, so cannot check node "{args.node}"; it is scheduled again'
            )
        if args.node not in view.nodes:
            return f'node "{args.node}" is not in gpuplane\'s cluster view'
        pod, needs = seen
        self.assumed.forget(pod.uid)
        now = self._assumed_view(view, now_s)
        decision = filter_nodes(now, pod, needs, (args.node,), self._cache)
        if decision.kept:
            return ""
        reason = decision.failed.get(args.node) or decision.unresolvable.get(args.node, "")
        return f'node "{args.node}" no longer fits pod {who} in gpuplane\'s view: {reason}'

    def bound(self, args: BindingArgs, now_s: float) -> bool:
        """After a successful bind: the pod holds the node until the view shows it (False when
        the extender never saw the pod in a filter or prioritize request)."""
        seen = self._recent.get(args.pod_uid)
        if seen is None:
            return False
        self.assumed.assume(seen[0], args.node, now_s, "bind")
        return True


def node_versions(snapshot: ClusterSnapshot) -> dict[str, str]:
    """Node name -> resourceVersion of a snapshot's Node objects (for ``ExtenderState.load``)."""
    out = {}
    for node in snapshot.of("nodes"):
        meta = node.get("metadata") or {}
        if meta.get("name") and meta.get("resourceVersion"):
            out[str(meta["name"])] = str(meta["resourceVersion"])
    return out
